package suggest

import "testing"

func TestClosest(t *testing.T) {
	tools := []string{"Glob", "Read", "Grep", "mcp.fs.read_file"}
	tests := []struct {
		name string
		want string
	}{
		{"Glb", "Glob"},
		{"glob", "Glob"},
		{"Reed", "Read"},
		{"Raed", "Read"},
		{"mcp.fs.read_fil", "mcp.fs.read_file"},
		{"WebFetch", ""},
		{"", ""},
		{"Glob", ""}, // never suggests itself, and the others are too far
	}
	for _, tt := range tests {
		got := Closest(tt.name, tools)
		if got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "", 1},
		{"kitten", "sitting", 3},
		{"日本語", "日本", 1},
		{"Raed", "Read", 1},
		{"ab", "ba", 1},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
