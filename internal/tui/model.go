package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/limitctl/limitctl/internal/bench"
)

// The size drawn before the terminal reports its own (and when it never does, as in a pipe).
const (
	defaultWidth  = 80
	defaultHeight = 24
)

// SnapshotMsg carries one engine tick into the model.
type SnapshotMsg struct{ Snapshot bench.Snapshot }

// snapshotsClosedMsg says the engine closed its channel: the run is over.
type snapshotsClosedMsg struct{}

// Model is the dashboard. It renders snapshots and keeps a bounded history per strategy for
// its charts; it never talks to Redis. Copies share that history, as bubbletea's value
// models do: drive one copy at a time.
type Model struct {
	opts  Options
	st    styles
	width int
	// height is the terminal's; both are defaults until a tea.WindowSizeMsg arrives.
	height int

	snap    bench.Snapshot
	hasSnap bool
	asserts []AssertResult
	hist    map[string]*history

	paused bool
	// pauseAsked is set once the user pressed p: from then on the dashboard's own state wins
	// over a snapshot taken before the engine saw the request.
	pauseAsked bool
	help       bool
	quitting   bool

	snapshots <-chan bench.Snapshot
	done      <-chan struct{} // closed when Run returns, so a pending wait ends
}

// New builds the dashboard for a run.
func New(opts Options) Model {
	m := Model{
		opts:   opts,
		st:     newStyles(opts.Profile),
		width:  defaultWidth,
		height: defaultHeight,
		hist:   map[string]*history{},
	}
	for _, expr := range opts.Asserts {
		m.asserts = append(m.asserts, AssertResult{Expr: expr})
	}
	return m
}

// Init starts waiting for the engine's first snapshot.
func (m Model) Init() tea.Cmd { return m.waitForSnapshot() }

// waitForSnapshot delivers the next snapshot, or the end of the run when the channel closes.
// Update re-arms it after every snapshot, so exactly one wait is pending at a time.
func (m Model) waitForSnapshot() tea.Cmd {
	if m.snapshots == nil {
		return nil
	}
	snapshots, done := m.snapshots, m.done
	return func() tea.Msg {
		select {
		case s, ok := <-snapshots:
			if !ok {
				return snapshotsClosedMsg{}
			}
			return SnapshotMsg{s}
		case <-done:
			return nil
		}
	}
}

// Update handles keys, resizes and snapshots.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case SnapshotMsg:
		m.observe(msg.Snapshot)
		return m, m.waitForSnapshot()
	case snapshotsClosedMsg:
		m.snap.Done = true
		return m, tea.Quit
	}
	return m, nil
}

func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "q", "ctrl+c":
		if !m.quitting {
			m.quitting = true
			if end := m.opts.ending(msg.String() == "ctrl+c"); end != nil {
				end()
			}
		}
		return m, tea.Quit
	case "p":
		if m.opts.Controls == nil || m.snap.Done {
			return m, nil
		}
		m.paused, m.pauseAsked = !m.paused, true
		m.opts.Controls.SetPaused(m.paused)
	case "?":
		m.help = !m.help
	case "esc":
		m.help = false
	}
	return m, nil
}

// observe takes in one snapshot: the numbers to show and one tick of history per strategy.
func (m *Model) observe(s bench.Snapshot) {
	advanced := !m.hasSnap || s.Elapsed > m.snap.Elapsed
	m.snap, m.hasSnap = s, true
	if !m.pauseAsked {
		m.paused = s.Paused
	}
	if advanced { // a paused engine may repeat a tick; the charts only move with time
		for _, st := range s.Strategies {
			h := m.hist[st.Name]
			if h == nil {
				h = newHistory()
				m.hist[st.Name] = h
			}
			h.add(s.Elapsed, st)
		}
	}
	if m.opts.Judge != nil {
		if judged := m.opts.Judge(s); judged != nil {
			m.asserts = judged
		}
	}
}

func (m Model) quitRequested() bool { return m.quitting }

// Paused reports whether the dashboard shows the run as paused.
func (m Model) Paused() bool { return m.paused }

// HelpVisible reports whether the help overlay is shown.
func (m Model) HelpVisible() bool { return m.help }
