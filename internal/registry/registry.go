// Package registry is the one implementation of privtrain's name → value
// registries (aggregation rules, datasets, corruption kinds): written by
// Register from init functions, read concurrently, listed in lexical order.
package registry

import (
	"slices"
	"strconv"
	"sync"
)

// Registry maps names to values of type T; the zero value is not usable,
// use New. It is safe for concurrent use.
type Registry[T any] struct {
	pkg, noun string
	mu        sync.RWMutex
	m         map[string]T
}

// New returns an empty registry whose panics read "pkg: Register … noun …".
func New[T any](pkg, noun string) *Registry[T] {
	return &Registry[T]{pkg: pkg, noun: noun, m: map[string]T{}}
}

// Register adds v under name. It panics if name is empty or already
// registered (two values must never answer to one name); callers check
// their own conditions on v first.
func (r *Registry[T]) Register(name string, v T) {
	if name == "" {
		panic(r.pkg + ": Register with an empty " + r.noun + " name")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(r.pkg + ": Register called twice for " + r.noun + " " + strconv.Quote(name))
	}
	r.m[name] = v
}

// Lookup returns the value registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names lists the registered names in lexical order.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Unregister removes name (a no-op if absent). It exists for tests that
// register a temporary value; packages never call it.
func (r *Registry[T]) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, name)
}
