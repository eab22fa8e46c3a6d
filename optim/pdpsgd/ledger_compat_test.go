package pdpsgd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadMainLedgers: ledgers written by the code before the one-accountant
// form (testdata/main-ledger-*.json: an RDP ledger with bare RDP class
// accountants, a PLD ledger with its class accountants under "pld", a paper
// ledger; each after one round) load, and the next round planned and
// charged here is bit for bit the one that code planned and charged
// (main-ledger-*-next.json). The ledger written here loads again.
func TestLoadMainLedgers(t *testing.T) {
	for _, name := range []string{"rdp", "pld", "paper"} {
		data, err := os.ReadFile(filepath.Join("testdata", "main-ledger-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var l Ledger
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var next struct {
			Round Round     `json:"round"`
			Spent []float64 `json:"spent"`
		}
		nd, err := os.ReadFile(filepath.Join("testdata", "main-ledger-"+name+"-next.json"))
		if err != nil || json.Unmarshal(nd, &next) != nil {
			t.Fatalf("%s: next round: %v", name, err)
		}
		r, err := l.Plan(PlanRequest{Q: 0.2, Steps: 20, MinThreshold: true, Loss: Loss{W1: 1, W2: 1}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Float64bits(r.Sigma) != math.Float64bits(next.Round.Sigma) || r.Tau != next.Round.Tau || r.Steps != next.Round.Steps {
			t.Errorf("%s: next round σ = %v, τ = %v, %d steps; the previous code planned σ = %v, τ = %v, %d steps",
				name, r.Sigma, r.Tau, r.Steps, next.Round.Sigma, next.Round.Tau, next.Round.Steps)
		}
		if err := l.Charge(r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, want := range next.Spent {
			if got := l.Spent(i); got != want {
				t.Errorf("%s: example %d spent %v after the round, the previous code %v", name, i, got, want)
			}
		}
		again, err := json.Marshal(&l)
		if err != nil {
			t.Fatal(err)
		}
		var back Ledger
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("%s: reloading the ledger written here: %v", name, err)
		}
		if back.Spent(1) != l.Spent(1) || back.Accounting() != l.Accounting() {
			t.Errorf("%s: reloaded spent %v (%s), want %v (%s)", name, back.Spent(1), back.Accounting(), l.Spent(1), l.Accounting())
		}
	}
}
