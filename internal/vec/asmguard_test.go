package vec

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// simdReg matches an X, Y or Z register operand.
var simdReg = regexp.MustCompile(`^[XYZ]([0-9]|[12][0-9]|3[01])$`)

// nonVEX returns the instructions of a Go assembly source that use an
// X, Y or Z register without the VEX/EVEX encoding (mnemonic not starting
// with V): a legacy-SSE instruction inside AVX code, such as MOVQ R10, X1,
// costs an SSE/AVX state transition (or a false dependency on the upper
// halves) on every execution on Intel CPUs.
func nonVEX(src string) []string {
	var bad []string
	sc := bufio.NewScanner(strings.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if i := strings.Index(s, "//"); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if i := strings.Index(s, ":"); i >= 0 && !strings.ContainsAny(s[:i], " \t(") {
			s = strings.TrimSpace(s[i+1:]) // label
		}
		if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "TEXT") || strings.HasPrefix(s, "DATA") || strings.HasPrefix(s, "GLOBL") {
			continue
		}
		fields := strings.Fields(s)
		mnem := fields[0]
		if strings.HasPrefix(mnem, "V") {
			continue
		}
		for _, op := range strings.Split(strings.TrimSpace(strings.TrimPrefix(s, mnem)), ",") {
			if simdReg.MatchString(strings.TrimSpace(op)) {
				bad = append(bad, fmt.Sprintf("%d: %s", line, s))
				break
			}
		}
	}
	return bad
}

// TestNonVEXChecker checks the checker on the pool kernel's old bug and on
// lines it must accept.
func TestNonVEXChecker(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{"\tMOVQ         R10, X1 // legacy SSE into an X register", 1},
		{"\tVMOVQ        R10, X1", 0},
		{"cloop:\n\tMOVQ R12, X4\n\tPXOR X0, X0\n\tMOVUPS (SI), X2", 3},
		{"\tMOVQ (R8)(R11*8), R12\n\tMOVQ x+0(FP), SI\n\tMOVSD X0, ret+16(FP)", 1},
		{"loop:\n\tVFMADD231PS Z16, Z18, Z0\n\tVZEROUPPER\n\tRET\nDATA iota8<>+0(SB)/4, $0", 0},
		{"\tCVTSS2SD X1, X1", 1},
	}
	for _, tc := range tests {
		if got := nonVEX(tc.src); len(got) != tc.want {
			t.Errorf("%q: flagged %q, want %d lines", tc.src, got, tc.want)
		}
	}
}

// TestAssemblyIsVEXOnly scans every *_amd64.s file of the module: no
// instruction may use an X/Y/Z register without VEX/EVEX encoding.
func TestAssemblyIsVEXOnly(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	var files int
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_amd64.s") {
			return nil
		}
		files++
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, b := range nonVEX(string(src)) {
			t.Errorf("%s:%s: non-VEX instruction on an X/Y/Z register", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("found only %d *_amd64.s files under %s; the walk is broken", files, root)
	}
}
