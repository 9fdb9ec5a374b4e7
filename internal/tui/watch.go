package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/human"
)

// Watch shows render's text live on the terminal out (in the alternate screen, in profile's
// colours), refreshed every interval, until q (interrupted false) or Ctrl-C or ctx's end
// (interrupted true); last is the last text rendered, for the caller to leave on the normal
// screen. A failed refresh keeps the last good text on screen with the error under it and
// tries again at the next tick: a blip must not end the watch. render runs off the UI
// goroutine; the view knows nothing of what it renders.
func Watch(ctx context.Context, title string, every time.Duration, now func() time.Time,
	render func(context.Context) (string, error), in io.Reader, out io.Writer, profile colorprofile.Profile) (last string, interrupted bool, err error) {
	m := newWatchModel(ctx, title, every, now, render)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithColorProfile(profile))
	final, err := p.Run()
	end, _ := final.(watchModel)
	interrupted = end.interrupted || ctx.Err() != nil || errors.Is(err, tea.ErrInterrupted)
	if err != nil && (interrupted || errors.Is(err, tea.ErrProgramKilled)) {
		err = nil
	}
	return end.body, interrupted, err
}

// watchModel is the live view: a title line and the last rendered text.
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
	fmt.Fprintf(&b, "Every %s: %s", human.Duration(m.every), m.title)
	if !m.at.IsZero() {
		fmt.Fprintf(&b, "   %s", m.at.Format("15:04:05"))
	}
	b.WriteString("   (q quit)\n\n")
	if m.body == "" && m.err == nil {
		b.WriteString("reading...\n")
	}
	b.WriteString(m.body)
	if m.err != nil {
		fmt.Fprintf(&b, "\nrefresh failed: %s\n", human.FirstLine(m.err.Error()))
	}
	return b.String()
}

// Repeat is Watch without a terminal (a pipe, CI): it calls show every interval (first the first
// time) until ctx ends, and then returns ctx's error; a failing show ends it with its error.
func Repeat(ctx context.Context, every time.Duration, show func(first bool) error) error {
	for first := true; ; first = false {
		if err := show(first); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
