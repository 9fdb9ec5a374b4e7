package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// watchInspect refreshes the inspect table live on a terminal until q (exit 0) or Ctrl-C
// (exit 130), then leaves the last table on the normal screen.
func watchInspect(ctx context.Context, f *Factory, opts *inspectOptions, render func(context.Context) (string, error)) error {
	m := newWatchModel(ctx, "limitctl inspect "+describeWatch(opts), opts.watch, f.Now, render)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Terminal()), tea.WithColorProfile(f.IO.ColorProfile()))
	final, err := p.Run()
	last, _ := final.(watchModel)
	if last.body != "" {
		fmt.Fprint(f.IO.Out, last.body)
	}
	interrupted := last.interrupted || ctx.Err() != nil || errors.Is(err, tea.ErrInterrupted)
	if err != nil && !interrupted && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	if interrupted {
		return interruptedError("watch stopped")
	}
	return nil
}

func describeWatch(opts *inspectOptions) string {
	if opts.members != "" {
		return "--members " + opts.members
	}
	return describeArgs(opts.args)
}

// watchModel is the live view: a title line and the last rendered report. It knows nothing
// about Redis; render does the work, off the UI goroutine.
type watchModel struct {
	ctx         context.Context
	title       string
	every       time.Duration
	now         func() time.Time
	render      func(context.Context) (string, error)
	body        string
	err         error
	at          time.Time
	interrupted bool
}

// watchFrame is one finished refresh.
type watchFrame struct {
	body string
	err  error
	at   time.Time
}

// watchTick asks for the next refresh.
type watchTick struct{}

func newWatchModel(ctx context.Context, title string, every time.Duration, now func() time.Time, render func(context.Context) (string, error)) watchModel {
	return watchModel{ctx: ctx, title: title, every: every, now: now, render: render}
}

func (m watchModel) Init() tea.Cmd { return m.refresh }

func (m watchModel) refresh() tea.Msg {
	body, err := m.render(m.ctx)
	return watchFrame{body: body, err: err, at: m.now()}
}

func (m watchModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "esc":
			return m, tea.Quit
		case "ctrl+c":
			m.interrupted = true
			return m, tea.Quit
		}
	case watchFrame:
		// A failed refresh keeps the last good table on screen with the error under it,
		// and tries again at the next tick: a blip must not end the watch.
		if msg.err == nil {
			m.body = msg.body
		}
		m.err, m.at = msg.err, msg.at
		return m, tea.Tick(m.every, func(time.Time) tea.Msg { return watchTick{} })
	case watchTick:
		return m, m.refresh
	}
	return m, nil
}

func (m watchModel) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	return v
}

func (m watchModel) screen() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Every %s: %s", humanDuration(m.every), m.title)
	if !m.at.IsZero() {
		fmt.Fprintf(&b, "   %s", m.at.Format("15:04:05"))
	}
	b.WriteString("   (q quit)\n\n")
	if m.body == "" && m.err == nil {
		b.WriteString("reading...\n")
	}
	b.WriteString(m.body)
	if m.err != nil {
		fmt.Fprintf(&b, "\nrefresh failed: %s\n", oneLine(m.err.Error()))
	}
	return b.String()
}
