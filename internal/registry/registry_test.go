package registry

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("pkg", "thing")
	for i, n := range []string{"b", "c", "a"} {
		r.Register(n, i)
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Names() = %v", got)
	}
	if v, ok := r.Lookup("c"); !ok || v != 1 {
		t.Errorf("Lookup(c) = %v, %v", v, ok)
	}
	if _, ok := r.Lookup("d"); ok {
		t.Error("Lookup of an unregistered name succeeded")
	}
	for _, c := range []struct{ name, want string }{
		{"", `pkg: Register with an empty thing name`},
		{"a", `pkg: Register called twice for thing "a"`},
	} {
		func() {
			defer func() {
				if p, _ := recover().(string); !strings.Contains(p, c.want) {
					t.Errorf("Register(%q): panic %q, want %q", c.name, p, c.want)
				}
			}()
			r.Register(c.name, 9)
		}()
	}
	// Concurrent readers and a late writer.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.Names(); r.Lookup("a") }()
	}
	r.Register("late", 4)
	r.Unregister("b")
	r.Unregister("nope")
	wg.Wait()
	if _, ok := r.Lookup("b"); ok {
		t.Error("b still registered after Unregister")
	}
	if v, _ := r.Lookup("late"); v != 4 {
		t.Error("late registration lost")
	}
}
