package runner

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/privtrain/privtrain/optim/pdpsgd"
	"github.com/privtrain/privtrain/privacy"
)

// mironovEpsilon is min over the accountant's orders of
// ρ(α) + log(1/δ)/(α − 1): the paper's RDP-to-DP conversion (its Theorem
// 4.8, Mironov 2017 Prop. 3), computed here from the RDP curve.
func mironovEpsilon(t *testing.T, a *privacy.RDPAccountant, delta float64) float64 {
	t.Helper()
	eps := math.Inf(1)
	for k, alpha := range a.Orders() {
		eps = math.Min(eps, a.RDP()[k]+math.Log(1/delta)/(alpha-1))
	}
	return eps
}

// TestPDPMironovConversion runs every PDP method (and both pdp-sampling
// draws, both AdaPDP round lengths' accounting) with --conversion mironov —
// the paper's accounting, ε = ρ + log(1/δ)/(α − 1) — and recomputes every
// example's spend from the round reports: per-example RDP under rdp
// accounting (each round composes steps Poisson-subsampled Gaussians at
// q·π_i), Theorem 4.2 on the round's DP-SGD under paper accounting
// (log(1 + π_i(e^{ε_R} − 1)) with ε_R at δ_i/k). The preset's bbg
// conversion must not survive anywhere.
func TestPDPMironovConversion(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN on MNIST")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		method, accounting string
		set                func(*TrainConfig)
	}{
		{"pdp-dpsgd", "rdp", nil},
		{"pdp-sampling", "rdp", nil},
		{"pdp-sgd", "rdp", nil},
		{"pdp-adapdp", "rdp", nil},
		{"pdp-sampling", "paper", func(c *TrainConfig) { c.PDP.SamplingDraw = samplingOnce }},
		{"pdp-sgd", "paper", nil},
		{"pdp-adapdp", "paper", nil},
	} {
		name := fmt.Sprintf("%s-%s", tc.method, tc.accounting)
		if tc.set != nil {
			name += "-once"
		}
		t.Run(name, func(t *testing.T) {
			c := pdpRun(tc.method, filepath.Join(dir, name))
			c.Conversion, c.PDP.Accounting = "mironov", tc.accounting
			if tc.set != nil {
				tc.set(&c)
			}
			s, err := Train(context.Background(), c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var sum pdpSummary
			if err := readJSON(filepath.Join(c.Out, summaryFile), &sum); err != nil {
				t.Fatal(err)
			}
			g := sum.PDP.Guarantee
			if s.Conversion != "mironov" || g.Conversion != privacy.ConversionMironov || string(g.Accounting) != tc.accounting {
				t.Fatalf("conversion %q / %q, accounting %q", s.Conversion, g.Conversion, g.Accounting)
			}
			rounds := sum.PDP.Rounds
			k, _ := pdpLength(c, float64(c.BatchSize)/60000) // δ_R = δ_i/k under paper accounting
			rows := readLedger(t, c.Out, len(rounds))
			checked := map[[2]float64]bool{}
			for _, row := range rows {
				eps, delta := row[1], row[2]
				if checked[[2]float64{eps, delta}] {
					continue
				}
				checked[[2]float64{eps, delta}] = true
				acct, _ := privacy.NewRDPAccountant(nil)
				spent, retired := 0.0, false
				for R, r := range rounds {
					rem := eps - spent
					if retired || rem <= pdpsgd.MinRemaining {
						if row[3+R] != 0 {
							t.Fatalf("ε_i %v: charged %v in round %d after retiring", eps, row[3+R], R+1)
						}
						continue
					}
					pi := pdpsgd.Rate(rem, r.Tau)
					if tc.accounting == "rdp" {
						if err := acct.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: r.Sigma}, Q: r.Q * pi}, r.Steps); err != nil {
							t.Fatal(err)
						}
						spent = mironovEpsilon(t, acct, delta)
					} else {
						a, _ := privacy.NewRDPAccountant(nil)
						if err := a.Compose(privacy.PoissonSubsampled{Base: privacy.Gaussian{Sigma: r.Sigma}, Q: r.Q}, r.Steps); err != nil {
							t.Fatal(err)
						}
						spent += math.Log1p(pi * math.Expm1(mironovEpsilon(t, a, delta/float64(k))))
					}
					var ledger float64
					for k := 0; k <= R; k++ {
						ledger += row[3+k]
					}
					if math.Abs(ledger-spent) > 1e-9*math.Max(1, spent) {
						t.Errorf("ε_i %v after round %d: ledger %v, recomputed (mironov) %v", eps, R+1, ledger, spent)
					}
					retired = rem <= r.Tau && (tc.method != "pdp-adapdp" || r.Steps < c.Steps/c.PDP.Rounds)
				}
			}
			if tc.set != nil {
				// The one-time draw's rate is batch/Σπ_i.
				r := rounds[0]
				if want := math.Min(1, float64(c.BatchSize)/r.Participants); math.Abs(r.Q-want) > 1e-15 || !(r.Q > float64(c.BatchSize)/60000) {
					t.Errorf("one-time draw rate %v, want batch/Σπ = %v", r.Q, want)
				}
			}
		})
	}
}
