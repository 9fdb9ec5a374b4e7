package limiter

import (
	"fmt"
	"testing"

	"github.com/limitctl/limitctl/internal/trace"
)

// A shipped script's reply decoded once into the trace's record (an array of integers, as a
// Batch reads it) is the decision the same reply built as go-redis's gives, error and all.
func TestARecordedReplyDecidesAsTheReplyItself(t *testing.T) {
	replies := [][]int64{{}, {1}, {1, 7}, {0, 20, 350}, {1, 3, -2}, {1, 2, 3, 4}, {0, 9, 8, 7, 6, 5}}
	for _, d := range kinds {
		for _, ints := range replies {
			elems := make([]any, len(ints))
			for i, n := range ints {
				elems[i] = n
			}
			wantDec, wantErr := d.scriptReply(elems)
			var rec trace.Reply
			rec.SetInts(len(ints), ints[:min(len(ints), trace.MaxInts)])
			gotDec, gotErr := d.scriptInts(&rec)
			if gotDec != wantDec || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s %v: recorded %+v, %v; as the reply %+v, %v", d.Kind, ints, gotDec, gotErr, wantDec, wantErr)
			}
		}
	}
}
