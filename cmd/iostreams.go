package cmd

import (
	"bytes"

	"github.com/limitctl/limitctl/internal/iostreams"
)

// IOStreams are a command's standard streams, colours and prompt (internal/iostreams).
type IOStreams = iostreams.IOStreams

// ColorScheme paints the words that carry a verdict (internal/iostreams).
type ColorScheme = iostreams.ColorScheme

// SystemStreams are the process's own streams.
func SystemStreams() *IOStreams { return iostreams.System() }

// TestStreams returns streams backed by buffers, none a terminal.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) { return iostreams.Test() }
