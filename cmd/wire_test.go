package cmd

import (
	"encoding/json"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
)

// The JSON contracts of inspect, purge and hammer as a script reads them: the tests decode the
// built command's output into these, apart from the types the command prints, so a field that
// moves, changes type or goes missing fails them.

// inspectKey is one key of inspect -o json.
type inspectKey struct {
	Key         string   `json:"key"`
	Node        string   `json:"node"`
	Type        string   `json:"type"`
	Kind        string   `json:"kind"`
	Size        int64    `json:"size"`
	TTLMs       int64    `json:"ttl_ms"` // -1: no TTL
	OldestAgeMs *int64   `json:"oldest_age_ms"`
	NewestAgeMs *int64   `json:"newest_age_ms"`
	Stale       int64    `json:"stale"`
	MemoryBytes *int64   `json:"memory_bytes"`
	Flags       []string `json:"flags"`

	// Added after the first release (CHANGELOG): null when they do not apply to the key.
	ScoreUnit     *string `json:"score_unit"`     // a sorted set's or bucket's time unit
	Scores        *string `json:"scores"`         // a sorted set's scores: start or deadline
	ScoresGuessed bool    `json:"scores_guessed"` // --scores auto decided it
	Expired       *int64  `json:"expired"`        // deadline scores: members past their deadline
	FullAtMs      *int64  `json:"full_at_ms"`     // gcra: Unix ms when the key is back to a full burst; counter: when its window ends
	FullInMs      *int64  `json:"full_in_ms"`     // ms until then (0: full now)
	WindowMs      *int64  `json:"window_ms"`      // sliding_counter: the inferred window; counter hash: end - start
	Estimate      *int64  `json:"estimate"`       // sliding_counter: the sliding-window count now
	PairKey       *string `json:"pair_key"`       // sliding_counter: the other window's key; bucket in two strings: the other string
}
type inspectDoc struct {
	SchemaVersion int          `json:"schema_version"`
	Scanned       int          `json:"scanned"`
	Keys          []inspectKey `json:"keys"`
}
type memberDoc struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
	Time   *string `json:"time"`
	AgeMs  *int64  `json:"age_ms"`
	Stale  bool    `json:"stale"`
}
type membersDoc struct {
	SchemaVersion int         `json:"schema_version"`
	Key           string      `json:"key"`
	Node          string      `json:"node"`
	Size          int64       `json:"size"`
	ScoreUnit     *string     `json:"score_unit"`
	Scores        *string     `json:"scores"`         // start or deadline (added after the first release)
	ScoresGuessed bool        `json:"scores_guessed"` // --scores auto decided it
	Members       []memberDoc `json:"members"`
}

type purgeKey struct {
	Key       string `json:"key"`
	Removed   int64  `json:"removed"`
	Remaining int64  `json:"remaining"`
	Skipped   string `json:"skipped"`

	// Added after the first release (CHANGELOG): null when the key's scores were not read as times.
	ScoreUnit     *string `json:"score_unit"`
	Scores        *string `json:"scores"`         // start or deadline
	ScoresGuessed bool    `json:"scores_guessed"` // --scores auto decided it
}
type purgeDoc struct {
	SchemaVersion int        `json:"schema_version"`
	DryRun        bool       `json:"dry_run"`
	OlderThanMs   int64      `json:"older_than_ms"`
	Keys          []purgeKey `json:"keys"`
	TotalRemoved  int64      `json:"total_removed"`
}

type hammerDoc struct {
	SchemaVersion int                       `json:"schema_version"`
	RunID         string                    `json:"run_id"`
	Target        bench.Target              `json:"target"`
	Limiter       string                    `json:"limiter"`
	Limit         int64                     `json:"limit"`
	Workers       int                       `json:"workers"`
	Conns         int                       `json:"conns"`               // 0: one connection per worker
	Processes     int                       `json:"processes,omitempty"` // hammer report: the processes merged
	DurationS     float64                   `json:"duration_s"`
	Interrupted   bool                      `json:"interrupted"`
	Profile       string                    `json:"profile"`
	SkewMs        float64                   `json:"skew_ms"`
	Strategies    []strategyDoc             `json:"strategies"`
	Assertions    []verdict.AssertionResult `json:"assertions"`
	Passed        bool                      `json:"passed"`
	Failures      []string                  `json:"failures"`
	KeysDeleted   int64                     `json:"keys_deleted"`
	CleanupErrors []string                  `json:"cleanup_errors"`
}
type strategyDoc struct {
	Name              string              `json:"name"`
	Attempts          int64               `json:"attempts"`
	Admitted          int64               `json:"admitted"`
	Rejected          int64               `json:"rejected"`
	Errors            int64               `json:"errors"`
	ErrorsByKind      map[string]int64    `json:"errors_by_kind"`
	Retries           int64               `json:"retries"`
	Peak              int64               `json:"peak"`
	Overshoot         int64               `json:"overshoot"`
	OvershootEvents   int64               `json:"overshoot_events"`
	ThroughputPerS    float64             `json:"throughput_per_s"`
	LatencyMs         latencyDoc          `json:"latency_ms"`
	ServerUsecPerCall *float64            `json:"server_usec_per_call"`
	FailOpenAdmits    int64               `json:"fail_open_admits"`
	FailClosedRejects int64               `json:"fail_closed_rejects"`
	ReleaseErrors     int64               `json:"release_errors"`
	Contended         bool                `json:"contended"`
	ErrorSamples      []bench.ErrorSample `json:"error_samples"`
	Unjudged          int64               `json:"unjudged"`
	// FirstOvershoot is how the first overshoot happened; null for a strategy that held.
	FirstOvershoot *overshootDoc `json:"first_overshoot"`
	// FalseRejects is null when refusals were not judged; FirstFalseReject the first's evidence.
	FalseRejects     *int64          `json:"false_rejects"`
	FirstFalseReject *falseRejectDoc `json:"first_false_reject"`
	RefusalsUnjudged string          `json:"refusals_unjudged"`
	// Verdict is the strategy's verdict word (verdict.Verdict), as its verdict line says it.
	Verdict string `json:"verdict"`
	// Clock is whose time the strategy's script used: client (passed in ARGV) or server (TIME).
	Clock string `json:"clock"`
	// Contract is how the custom script was called and its reply read (custom only).
	Contract *contractDoc `json:"contract,omitempty"`
}
type overshootDoc struct {
	AtMs        float64      `json:"at_ms"`
	Held        *int64       `json:"held"`
	InWindow    *int64       `json:"in_window"`
	Limit       int64        `json:"limit"`
	Requests    []requestDoc `json:"requests"`
	Missing     int64        `json:"missing"`
	ThisProcess bool         `json:"this_process_only"`
}
type requestDoc struct {
	ID     string `json:"id"`
	Worker int    `json:"worker"`
	Raced  bool   `json:"raced"`
	Steps  []struct {
		Op        string          `json:"op"`
		Reply     json.RawMessage `json:"reply"`
		SentUs    int64           `json:"sent_us"`
		RepliedUs int64           `json:"replied_us"`
	} `json:"steps"`
}
type falseRejectDoc struct {
	SentMs         float64  `json:"sent_ms"`
	RepliedMs      float64  `json:"replied_ms"`
	StampMs        *float64 `json:"stamp_ms"`
	HeldOrAdmitted int64    `json:"held_or_admitted"`
	Limit          int64    `json:"limit"`
	TokensLeft     *float64 `json:"tokens_left"`
}
type contractDoc struct {
	Keys    string `json:"keys"`
	Args    string `json:"args"`
	Allowed string `json:"allowed"`
	Release string `json:"release,omitempty"` // concurrency only
}
type latencyDoc struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}
