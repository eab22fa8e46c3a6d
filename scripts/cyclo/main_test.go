package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestComplexity counts hand-checked functions: 1 + if, for, range,
// non-default case, select case, && and ||, closures included.
func TestComplexity(t *testing.T) {
	src := `package p
func a() {}
func b(x int) int {
	if x > 0 && x < 9 || x == 20 { // if, &&, ||
		return 1
	}
	for i := 0; i < x; i++ {} // for
	for range []int{} {}      // range
	switch x {
	case 1, 2: // one clause
	case 3:
	default:
	}
	f := func() { if x > 1 {} } // closure's if
	f()
	var c chan int
	select {
	case <-c:
	default:
	}
	return 0
}
func (r *T) m() { if true {} }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 1, "b": 10, "(T).m": 2}
	for _, d := range f.Decls {
		fn := d.(*ast.FuncDecl)
		if got := complexity(fn); got != want[funcName(fn)] {
			t.Errorf("%s: complexity %d, want %d", funcName(fn), got, want[funcName(fn)])
		}
	}
}
