package keys

import (
	"time"

	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// The JSON of inspect and purge: every duration a number of milliseconds with _ms in its name,
// a TTL of -1 for none, and null for what a key's kind does not have. Each result type says
// here how it reads; its Table (table.go) shows the same values.

// MarshalJSON writes one key of inspect -o json.
func (k KeyInfo) MarshalJSON() ([]byte, error) {
	ttl := int64(-1)
	if k.TTL >= 0 {
		ttl = k.TTL.Milliseconds()
	}
	var window *int64
	if k.Window > 0 {
		window = msPtr(&k.Window)
	}
	var fullAt *int64
	if k.FullAt != nil {
		ms := k.FullAt.UnixMilli()
		fullAt = &ms
	}
	var pair *string
	if k.PairKey != "" {
		pair = &k.PairKey
	}
	flags := k.Flags
	if flags == nil {
		flags = []Flag{}
	}
	return tableprint.Marshal(struct {
		Key           string      `json:"key"`
		Node          string      `json:"node"`
		Type          string      `json:"type"`
		Kind          kind.Kind   `json:"kind"`
		Size          int64       `json:"size"`
		TTLMs         int64       `json:"ttl_ms"`
		OldestAgeMs   *int64      `json:"oldest_age_ms"`
		NewestAgeMs   *int64      `json:"newest_age_ms"`
		Stale         int64       `json:"stale"`
		MemoryBytes   *int64      `json:"memory_bytes"`
		Flags         []Flag      `json:"flags"`
		ScoreUnit     scores.Unit `json:"score_unit"`
		Scores        scores.Mode `json:"scores"`
		ScoresGuessed bool        `json:"scores_guessed"`
		Expired       *int64      `json:"expired"`
		FullAtMs      *int64      `json:"full_at_ms"`
		FullInMs      *int64      `json:"full_in_ms"`
		WindowMs      *int64      `json:"window_ms"`
		Estimate      *int64      `json:"estimate"`
		PairKey       *string     `json:"pair_key"`
	}{
		k.Key, k.Node, k.Type, k.Kind, k.Size, ttl, msPtr(k.OldestAge), msPtr(k.NewestAge), k.Stale, k.Memory, flags,
		k.Unit, k.Scores, k.Scores != "" && k.ScoresGuessed, k.Expired, fullAt, msPtr(k.FullIn), window, k.Estimate, pair,
	})
}

// memberTime is how a member's time reads: UTC to the millisecond.
const memberTime = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes one member of inspect --members -o json.
func (m Member) MarshalJSON() ([]byte, error) {
	var at *string
	if m.Time != nil {
		s := m.Time.UTC().Format(memberTime)
		at = &s
	}
	return tableprint.Marshal(struct {
		Member string  `json:"member"`
		Score  float64 `json:"score"`
		Time   *string `json:"time"`
		AgeMs  *int64  `json:"age_ms"`
		Stale  bool    `json:"stale"`
	}{m.Member, m.Score, at, msPtr(m.Age), m.Stale})
}

// MarshalJSON writes purge -o json.
func (r PurgeResult) MarshalJSON() ([]byte, error) {
	return tableprint.Marshal(struct {
		DryRun       bool        `json:"dry_run"`
		OlderThanMs  int64       `json:"older_than_ms"`
		Keys         []PurgedKey `json:"keys"`
		TotalRemoved int64       `json:"total_removed"`
	}{r.DryRun, r.OlderThan.Milliseconds(), r.Keys, r.TotalRemoved})
}

func msPtr(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}
