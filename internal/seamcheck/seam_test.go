// Package seamcheck holds the guard of the accountant seam (issue 23): no
// code outside privacy/ branches on the accountant kind or asserts a
// concrete accountant type; everything goes through privacy.Accountant.
package seamcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kindNames are the accountant-kind constants: privacy's and the PDP
// ledger's names for the same accountants.
var kindNames = map[string]bool{"KindRDP": true, "KindPLD": true, "AccountingRDP": true, "AccountingPLD": true}

// isKind reports whether e names an accountant kind constant (privacy.KindPLD,
// pdpsgd.AccountingPLD, or AccountingPLD inside pdpsgd).
func isKind(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return kindNames[e.Sel.Name]
	case *ast.Ident:
		return kindNames[e.Name]
	case *ast.ParenExpr:
		return isKind(e.X)
	}
	return false
}

// isConcrete reports whether t is a concrete privacy accountant type
// (privacy.PLDAccountant, privacy.RDPAccounting, privacy.RDPAccountant, with or
// without *): anything named *Accountant or *Accounting in package privacy
// other than the interface itself.
func isConcrete(t ast.Expr) bool {
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	n := sel.Sel.Name
	return ok && pkg.Name == "privacy" && n != "Accountant" && (strings.HasSuffix(n, "Accountant") || strings.HasSuffix(n, "Accounting"))
}

// isKindLit reports whether e is the string literal "pld" or "rdp" (an
// accountant kind when compared with an accountant's name).
func isKindLit(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.STRING && (l.Value == `"pld"` || l.Value == `"rdp"`)
}

// namesAccountant reports whether e mentions an accountant or accounting
// (c.Accountant, sum.Accountant, f.accountant, cfg.PDP.Accounting, ...).
func namesAccountant(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			l := strings.ToLower(id.Name)
			found = found || strings.Contains(l, "accountant") || strings.Contains(l, "accounting")
		}
		return !found
	})
	return found
}

// sites lists the branch sites in one file: comparisons and switch cases on
// an accountant kind constant, type assertions and type-switch cases on a
// concrete accountant type.
func sites(fset *token.FileSet, f *ast.File) []string {
	var out []string
	add := func(n ast.Node, what string) {
		p := fset.Position(n.Pos())
		out = append(out, p.Filename+":"+itoa(p.Line)+": "+what)
	}
	var tags []ast.Expr // switch tags seen so far
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SwitchStmt:
			// Cases below see this tag (and, over-approximating, the tags of
			// the switches before it: that only makes the guard stricter).
			tags = append(tags, n.Tag)
		case *ast.BinaryExpr:
			kind := isKind(n.X) || isKind(n.Y) ||
				isKindLit(n.X) && namesAccountant(n.Y) || isKindLit(n.Y) && namesAccountant(n.X)
			if (n.Op == token.EQL || n.Op == token.NEQ) && kind {
				add(n, "comparison with an accountant kind")
			}
		case *ast.CaseClause:
			tagged := false
			for _, t := range tags {
				tagged = tagged || t != nil && namesAccountant(t)
			}
			for _, e := range n.List {
				if isKind(e) || isKindLit(e) && tagged {
					add(e, "switch case on an accountant kind")
				} else if isConcrete(e) {
					add(e, "type switch on a concrete accountant")
				}
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil && isConcrete(n.Type) {
				add(n, "type assertion to a concrete accountant")
			}
		}
		return true
	})
	return out
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0 || len(b) == 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// scan returns the branch sites of every Go file under root outside
// privacy/ (the accountants' own package); tests, which assert which
// accountant reported a number, are not scanned.
func scan(t *testing.T, root string) []string {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "privacy" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, s := range sites(fset, f) {
			out = append(out, strings.TrimPrefix(s, root+string(filepath.Separator)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// allowed are the sites that remain, each with its reason: none. (The
// account command's RDP options reach the RDP accountant through
// privacy.AccountantConfig and the privacy.RDPComposer capability; its
// default is privacy.ChooseAccountant.)
var allowed []string

// TestNoAccountantBranches fails when code outside privacy/ branches on the
// accountant kind or asserts a concrete accountant type (SEAM_ROOT
// measures another checkout).
func TestNoAccountantBranches(t *testing.T) {
	root := os.Getenv("SEAM_ROOT")
	if root == "" {
		root = filepath.Join("..", "..")
	}
	root, _ = filepath.Abs(root)
	got := scan(t, root)
	t.Logf("%d branch sites outside privacy/ under %s", len(got), root)
	var extra []string
	for _, s := range got {
		t.Log(s)
		file, what, _ := strings.Cut(s, ": ")
		if i := strings.LastIndex(file, ":"); i >= 0 {
			file = file[:i]
		}
		if !slices.Contains(allowed, file+": "+what) {
			extra = append(extra, s)
		}
	}
	if os.Getenv("SEAM_ROOT") == "" && len(extra) > 0 {
		t.Errorf("code outside privacy/ branches on the accountant kind or asserts a concrete accountant type (use privacy.Accountant, RegisterAccountant, EpsilonSoFar, CalibrateSigma):\n%s", strings.Join(extra, "\n"))
	}
}

// TestDetector: the scanner finds each kind of site in a sample.
func TestDetector(t *testing.T) {
	src := `package x
func f(a privacy.Accountant, k string) {
	if k == privacy.KindPLD {}
	switch k { case privacy.KindRDP: }
	_ = a.(*privacy.PLDAccountant)
	switch a.(type) { case *privacy.RDPAccounting: }
	if l.acc != AccountingPLD {}
	_ = a.(privacy.Accountant)
	if k == "x" {}
	if sum.Accountant == "pld" {}
	if sub == "rdp" {}
	switch cfg.Accountant { case "rdp": }
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := sites(fset, f); len(got) != 7 {
		t.Errorf("found %d sites, want 7: %v", len(got), got)
	}
}
