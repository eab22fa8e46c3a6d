package pdpsgd

import (
	"github.com/privtrain/privtrain/privacy"
	"math"
	"testing"
)

// TestPlanDrawnBatch checks Definition B.1's rate: with DrawnBatch the
// paper-accounted round samples D_s at batch/Σπ_i, calibrated at that
// rate (the round's DP-SGD is (τ, δ)-DP there), and per-step accountings
// refuse it.
func TestPlanDrawnBatch(t *testing.T) {
	budgets, err := GroupSpec{Groups: 4, Min: 0.5, Max: 1}.Generate(6000, 1e-5, 2)
	if err != nil {
		t.Fatal(err)
	}
	req := PlanRequest{Q: 64.0 / 6000, Steps: 200, Loss: Loss{W1: 0.7, W2: 0.3}, DrawnBatch: 64}
	rdp, _ := NewLedger(budgets, privacy.KindRDP, privacy.AccountantConfig{})
	if _, err := rdp.Plan(req); err == nil {
		t.Error("per-step RDP accepted a batch over a drawn D_s")
	}
	l, _ := NewPaperLedger(budgets, "mironov", 1)
	r, err := l.Plan(req)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, c := range l.classes {
		sum += float64(c.count) * Rate(c.remaining(), r.Tau)
	}
	if math.Abs(r.Participants-sum) > 1e-9 || math.Abs(r.Q-64/sum) > 1e-15 || !(r.Q > req.Q) {
		t.Fatalf("rate %v, want 64/Σπ = %v (Σπ = %v)", r.Q, 64/sum, sum)
	}
	// The round's DP-SGD at (σ, batch/Σπ) is (τ, δ)-DP: the π = 1 classes
	// spend at most τ, and no class more than its cap.
	if err := l.Charge(r); err != nil {
		t.Fatal(err)
	}
	for k, c := range l.classes {
		if c.spent > r.Caps[k] || c.spent > c.budget.Epsilon {
			t.Errorf("class %v: spent %v, cap %v", c.budget.Epsilon, c.spent, r.Caps[k])
		}
	}
	again, _ := NewPaperLedger(budgets, "mironov", 1)
	r0, _ := again.Plan(PlanRequest{Q: req.Q, Steps: req.Steps, Loss: req.Loss})
	if !(r.Sigma > r0.Sigma) {
		t.Errorf("σ at the larger rate %v not above σ at q %v", r.Sigma, r0.Sigma)
	}
}
