// Command cyclo prints the cyclomatic complexity of every function in the
// Go files under the given directories, highest first, counted as gocyclo
// (github.com/fzipp/gocyclo) counts it: 1 + one per if, for, range,
// non-default case, select case, && and ||.
//
//	go run ./scripts/cyclo [-top N] [-over N] dir...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stat is one function's complexity.
type stat struct {
	complexity int
	name, pos  string
}

func main() {
	top := flag.Int("top", 10, "print the N most complex functions (0: all)")
	over := flag.Int("over", 0, "exit 1 if a function's complexity exceeds N (0: no limit)")
	tests := flag.Bool("tests", false, "include _test.go files")
	flag.Parse()
	var stats []stat
	fset := token.NewFileSet()
	for _, dir := range flag.Args() {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || (!*tests && strings.HasSuffix(path, "_test.go")) {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
					stats = append(stats, stat{complexity(fn), funcName(fn), fset.Position(fn.Pos()).String()})
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "cyclo:", err)
			os.Exit(2)
		}
	}
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].complexity > stats[j].complexity })
	bad := false
	for i, s := range stats {
		if *top == 0 || i < *top {
			fmt.Printf("%d %s %s\n", s.complexity, s.name, s.pos)
		}
		bad = bad || (*over > 0 && s.complexity > *over)
	}
	if bad {
		os.Exit(1)
	}
}

// funcName is "name" or "(Recv).name", as gocyclo prints it.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// complexity counts the decision points of fn (closures included, as
// gocyclo does).
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
