// Package refusal proves refusals wrong: decisions refused while the limiter certainly had room.
package refusal
