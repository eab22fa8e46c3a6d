package pdpsgd

import (
	"github.com/privtrain/privtrain/privacy"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBudgetGroupsBoundedByN: more groups than examples are refused at
// once (the issue's --budget-groups 1000000 used to run for hours).
func TestBudgetGroupsBoundedByN(t *testing.T) {
	start := time.Now()
	_, _, err := GroupSpec{Groups: 1000000, Min: 0.5, Max: 1}.GroupCounts(60000)
	if err == nil || !strings.Contains(err.Error(), "1000000 groups for 60000 examples: at most one group per example") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusal took %v", d)
	}
	if _, counts, err := (GroupSpec{Groups: 50, Min: 0.5, Max: 1}).GroupCounts(50); err != nil || len(counts) != 50 {
		t.Errorf("one group per example: %v", err)
	}
}

// TestPlanSkipsClassesThatFit: planning evaluates a class that already fits
// at the σ found so far once instead of bisecting; σ is the maximum over
// classes either way. The reference is the per-class calibration (σ_k of
// each class separately, maximised), computed independently here.
func TestPlanSkipsClassesThatFit(t *testing.T) {
	b, err := GroupSpec{Groups: 12, Min: 0.5, Max: 1}.Generate(3000, 1e-5, 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLedger(b, privacy.KindRDP, privacy.AccountantConfig{})
	if err != nil {
		t.Fatal(err)
	}
	req := PlanRequest{Q: 0.02, Steps: 50, Loss: Loss{W1: 0.7, W2: 0.3}}
	r, err := l.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	// Independent maximum: the smallest σ on the calibration grid meeting
	// each class's cap, by the ledger's own fits() on one class at a time.
	var want float64
	for k := range l.classes {
		if r.Rates[k] == 0 {
			continue
		}
		one := r
		one.Rates = make([]float64, len(r.Rates))
		one.Rates[k] = r.Rates[k]
		ok, err := l.fits(one, r.Sigma, r.Steps)
		if err != nil || !ok {
			t.Fatalf("class %d does not fit at the planned σ %v (%v)", k, r.Sigma, err)
		}
		if ok, _ := l.fits(one, r.Sigma*(1-1e-3), r.Steps); !ok {
			want = r.Sigma // some class is tight at σ
		}
	}
	if want != r.Sigma {
		t.Errorf("no class is tight at the planned σ %v: it is not the maximum of the per-class σ", r.Sigma)
	}
}

// TestBudgetOutliersRefused: a budget far outside the rest (1e300 among
// budgets near 1) is refused naming the example; a FIFO is refused instead
// of blocking.
func TestBudgetOutliersRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.csv")
	os.WriteFile(p, []byte("index,epsilon\n0,1\n1,0.5\n2,1e300\n3,0.8\n"), 0o644)
	if _, err := LoadBudgets(p, 4, 1e-5); err == nil || !strings.Contains(err.Error(), "example 2 has ε = 1e+300, more than 1000× the median budget") {
		t.Errorf("outlier: %v", err)
	}
	os.WriteFile(p, []byte("0,1\n1,0.5\n2,400\n3,0.8\n"), 0o644)
	if _, err := LoadBudgets(p, 4, 1e-5); err != nil {
		t.Errorf("spread within bounds refused: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := LoadBudgets(fifo, 4, 1e-5); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}
