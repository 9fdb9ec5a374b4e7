package ciformat

import "testing"

func TestPathsAreRelativeToTheWorkingDirectory(t *testing.T) {
	tests := []struct {
		name, path, uri string
		inside          bool
	}{
		{"a.lua", "a.lua", "a.lua", true},
		{"./scripts/../a.lua", "a.lua", "a.lua", true},
		{"/work/repo/lib/b.lua", "lib/b.lua", "lib/b.lua", true},
		{"odd name%.lua", "odd name%.lua", "odd%20name%25.lua", true},
		// A first segment with a colon would read as a URI scheme.
		{"a:b.lua", "a:b.lua", "./a:b.lua", true},
		{"../sibling/c.lua", "/work/sibling/c.lua", "file:///work/sibling/c.lua", false},
		{"/work/repository/d.lua", "/work/repository/d.lua", "file:///work/repository/d.lua", false},
		{StdinName, StdinName, "%3Cstdin%3E", false},
	}
	for _, tt := range tests {
		path, inside := relPath("/work/repo", tt.name)
		uri, relative := fileURI("/work/repo", tt.name)
		if path != tt.path || inside != tt.inside || uri != tt.uri || relative != (tt.inside && tt.name != StdinName) {
			t.Errorf("%q: path %q inside %v, uri %q relative %v; want %q %v %q", tt.name, path, inside, uri, relative, tt.path, tt.inside, tt.uri)
		}
	}
	if got := dirURI("/work/my repo"); got != "file:///work/my%20repo/" {
		t.Errorf("dirURI: %q", got)
	}
}
