// Package verdict judges a run: each strategy's verdict, its tone and badge, and the assertions.
package verdict
