// Package outfile is the files a command writes beside its output: the HTML report, the JUnit
// report, GitHub's step summary. Each is checked before a run spends its time (Check, which
// neither creates nor truncates it, so a refused run leaves nothing behind) and written once
// the run has its result.
package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/scripts"
)

// Check makes sure path can be written, without creating or truncating it: an existing file is
// replaced only when it is written; a new one is probed with a temporary file beside it.
func Check(path string) error {
	if fh, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		return fh.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return scripts.UnwrapPathError(err)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".limitctl-report-*")
	if err != nil {
		return scripts.UnwrapPathError(err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// CheckFlag is Check for the file a flag names, before a run: nil when path is empty (no file
// asked for), else a usage error naming the flag when the file cannot be written.
func CheckFlag(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := Check(path); err != nil {
		return exitcode.Usagef("%s: %v", flag, err)
	}
	return nil
}

// Write replaces path with what write writes.
func Write(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return scripts.UnwrapPathError(err)
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return scripts.UnwrapPathError(fh.Close())
}

// Append adds data at the end of path, creating it if need be.
func Append(path string, data []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = fh.Write(data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}
	return scripts.UnwrapPathError(err)
}
