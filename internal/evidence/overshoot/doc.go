// Package overshoot proves or disproves that a limiter admitted more than its limit.
package overshoot
