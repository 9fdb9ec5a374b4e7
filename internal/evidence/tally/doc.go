// Package tally keeps counts per millisecond in time order, for the evidence's windows.
package tally
