package pdpsgd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/privtrain/privtrain/privacy"
)

// ledgerJSON is the serialized Ledger (version 1).
type ledgerJSON struct {
	Version    int                `json:"version"`
	Conversion privacy.Conversion `json:"conversion"`
	// Accounting is "" (read as rdp) or paper, with PaperRounds its k.
	Accounting  Accounting  `json:"accounting,omitempty"`
	PaperRounds int         `json:"paper_rounds,omitempty"`
	Classes     []classJSON `json:"classes"`
	// Class maps each example to its class.
	Class  []int   `json:"class"`
	Rounds []Round `json:"rounds"`
}

type classJSON struct {
	Budget     Budget    `json:"budget"`
	Count      int       `json:"count"`
	Spent      float64   `json:"spent"`
	Rounds     []float64 `json:"rounds"`
	Retired    bool      `json:"retired,omitempty"`
	DeltaSpent float64   `json:"delta_spent,omitempty"`
	// Accountant is the class's accountant (its own JSON, which names its
	// kind; before every accountant wrote its kind, a bare RDP accountant).
	Accountant json.RawMessage `json:"accountant,omitempty"`
	// PLD is where ledgers before the one-accountant form kept the class's
	// PLD accountant (read only).
	PLD json.RawMessage `json:"pld,omitempty"`
}

// MarshalJSON writes the budgets, every class's accountant history and the
// charged rounds.
func (l *Ledger) MarshalJSON() ([]byte, error) {
	out := ledgerJSON{Version: 1, Conversion: l.conv, Class: l.class, Rounds: l.rounds, Accounting: l.acc, PaperRounds: l.paperRounds}
	for _, c := range l.classes {
		a, err := json.Marshal(c.acct)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		out.Classes = append(out.Classes, classJSON{Budget: c.budget, Count: c.count, Spent: c.spent, Rounds: c.rounds, Retired: c.retired, DeltaSpent: c.deltaSpent, Accountant: a})
	}
	return json.Marshal(out)
}

// UnmarshalJSON restores a ledger written by MarshalJSON and runs Check on
// it, so a tampered or inconsistent ledger is refused; each class then
// holds the larger of its recorded and its recomputed spend
// (adoptRecomputed: a ledger written with an earlier accountant version).
func (l *Ledger) UnmarshalJSON(data []byte) error {
	var in ledgerJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if in.Version != 1 {
		return fmt.Errorf("ledger: version %d, this code reads 1", in.Version)
	}
	if err := in.Conversion.Validate(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if in.Accounting == "" {
		in.Accounting = AccountingRDP
	}
	if err := in.Accounting.Validate(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if (in.Accounting == AccountingPaper) != (in.PaperRounds > 0) {
		return fmt.Errorf("ledger: accounting %s with %d paper rounds", in.Accounting, in.PaperRounds)
	}
	nl := Ledger{conv: in.Conversion, acc: in.Accounting, paperRounds: in.PaperRounds, class: in.Class, rounds: in.Rounds}
	counts := make([]int, len(in.Classes))
	for i, k := range in.Class {
		if k < 0 || k >= len(in.Classes) {
			return fmt.Errorf("ledger: example %d has class %d of %d", i, k, len(in.Classes))
		}
		counts[k]++
	}
	// The class accountants: shared work, certified bounds only (as
	// NewLedger), the ledger's conversion for a bare RDP history.
	cfg := privacy.AccountantConfig{Conversion: in.Conversion, UpperOnly: true, Cache: privacy.NewPLDCache()}
	want := string(in.Accounting)
	if nl.paper() {
		want = privacy.KindRDP
	}
	for k, c := range in.Classes {
		if err := checkBudget(c.Budget); err != nil {
			return fmt.Errorf("ledger: class %d: %w", k, err)
		}
		data := c.Accountant
		if len(c.PLD) > 0 {
			if len(data) > 0 && string(data) != "null" {
				return fmt.Errorf("ledger: class %d has two accountants", k)
			}
			data = c.PLD
		}
		if len(data) == 0 || string(data) == "null" {
			return fmt.Errorf("ledger: class %d has no accountant for %s accounting", k, in.Accounting)
		}
		acct, err := privacy.LoadAccountant(data, cfg)
		if err != nil {
			return fmt.Errorf("ledger: class %d: %w", k, err)
		}
		if acct.Kind() != want {
			return fmt.Errorf("ledger: class %d has a %s accountant for %s accounting", k, acct.Kind(), in.Accounting)
		}
		if c.Count != counts[k] {
			return fmt.Errorf("ledger: class %d claims %d examples, has %d", k, c.Count, counts[k])
		}
		nl.classes = append(nl.classes, &class{budget: c.Budget, count: c.Count, acct: acct, spent: c.Spent, rounds: c.Rounds, retired: c.Retired, deltaSpent: c.DeltaSpent})
	}
	if err := nl.Check(); err != nil {
		return err
	}
	if err := nl.adoptRecomputed(); err != nil {
		return err
	}
	*l = nl
	return nil
}

// WriteCSV writes the per-example ledger: index, budget ε_i and δ_i, the ε
// charged in each round, the total spent, the unused budget ε_i − spent_i,
// and whether the example is retired (1: never sampled again; its unused
// budget is forfeited).
func (l *Ledger) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("index,epsilon,delta")
	for r := range l.rounds {
		fmt.Fprintf(bw, ",round_%d", r+1)
	}
	bw.WriteString(",spent,unused,retired\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	// Rows of a class are identical apart from the index.
	rows := make([]string, len(l.classes))
	for k, c := range l.classes {
		s := "," + f(c.budget.Epsilon) + "," + f(c.budget.Delta)
		for _, v := range c.rounds {
			s += "," + f(v)
		}
		retired := "0"
		if c.retired {
			retired = "1"
		}
		rows[k] = s + "," + f(c.spent) + "," + f(math.Max(c.budget.Epsilon-c.spent, 0)) + "," + retired + "\n"
	}
	for i, k := range l.class {
		bw.WriteString(strconv.Itoa(i))
		bw.WriteString(rows[k])
	}
	return bw.Flush()
}

// Guarantee is the (Φ, Δ)-personalized DP guarantee a ledger certifies
// (Definition 2.3): every example i is (Spent_i, δ_i)-DP, hence
// (ε_i, δ_i)-DP for its budget ε_i ≥ Spent_i.
type Guarantee struct {
	// Accounting is the ledger's accounting (which accountant produced
	// the spent ε).
	Accounting Accounting `json:"accounting,omitempty"`
	Examples   int        `json:"examples"`
	Rounds     int        `json:"rounds"`
	// BudgetMin/Max bound Φ; SpentMin/Max the ε actually spent.
	BudgetMin float64 `json:"budget_min"`
	BudgetMax float64 `json:"budget_max"`
	SpentMin  float64 `json:"spent_min"`
	SpentMax  float64 `json:"spent_max"`
	// MinSlack is min_i (ε_i − spent_i) ≥ 0; MeanUse the mean of
	// spent_i/ε_i (how much of the budgets the run used).
	MinSlack float64 `json:"min_slack"`
	MeanUse  float64 `json:"mean_use"`
	// DeltaMax is max δ_i: Δ = {δ_i} by individual RDP composition (paper
	// accounting: the largest δ spent, Σ_R π_{i,R}·δ_i/k ≤ δ_i).
	DeltaMax float64 `json:"delta_max"`
	// Theorem45Delta is R_max·max δ_i, the Δ Theorem 4.5 states for the
	// paper's ε-level composition over R_max rounds (weaker than DeltaMax,
	// and implied by it); under paper accounting, max δ_i, which the
	// δ_R = δ_i/k split guarantees.
	Theorem45Delta float64 `json:"theorem_4_5_delta"`
	// WorstOrder is the Rényi order at which the example with the largest
	// spend attains it.
	WorstOrder float64            `json:"worst_order"`
	Conversion privacy.Conversion `json:"conversion"`
	Statement  string             `json:"statement"`
}

// Converted reports whether Conversion enters the guarantee: under paper
// accounting every round's τ is certified by the RDP accountant with it, and
// a ledger whose largest spend was read off an RDP curve (WorstOrder > 0)
// converted that curve with it. A PLD ledger converts nothing.
func (g Guarantee) Converted() bool {
	return g.Accounting == AccountingPaper || g.WorstOrder > 0
}

// Guarantee summarises the ledger after Check.
func (l *Ledger) Guarantee() (Guarantee, error) {
	if err := l.Check(); err != nil {
		return Guarantee{}, err
	}
	g := Guarantee{Accounting: l.acc, Examples: len(l.class), Rounds: len(l.rounds), Conversion: l.conv,
		BudgetMin: math.Inf(1), SpentMin: math.Inf(1), MinSlack: math.Inf(1)}
	for _, c := range l.classes {
		b := c.budget
		g.BudgetMin, g.BudgetMax = math.Min(g.BudgetMin, b.Epsilon), math.Max(g.BudgetMax, b.Epsilon)
		g.SpentMin = math.Min(g.SpentMin, c.spent)
		if c.spent >= g.SpentMax {
			g.SpentMax, g.WorstOrder = c.spent, c.order
		}
		g.MinSlack = math.Min(g.MinSlack, b.Epsilon-c.spent)
		g.MeanUse += float64(c.count) * c.spent / b.Epsilon
		if l.paper() {
			g.DeltaMax = math.Max(g.DeltaMax, c.deltaSpent)
			g.Theorem45Delta = math.Max(g.Theorem45Delta, b.Delta)
		} else {
			g.DeltaMax = math.Max(g.DeltaMax, b.Delta)
		}
	}
	g.MeanUse /= float64(len(l.class))
	within := "every spent ε_i ≤ its budget"
	if over, most := l.overBudget(); over > 0 {
		within = fmt.Sprintf("every spent ε_i ≤ its budget except %d retired examples at up to %v above it (≤ %g relative), re-certified by this accountant version for steps an earlier version planned and certified within the budget", over, most, SpendTolerance)
	}
	if l.paper() {
		g.Statement = fmt.Sprintf("(Φ, Δ)-PDP with Φ = the per-example budgets ε_i ∈ [%.4g, %.4g] (spent ε ∈ [%.4g, %.4g], %s) and Δ = {Σ_R π_{i,R}·δ_i/%d} ≤ %.4g ≤ max δ_i = %g, by Theorem 4.2 per round (D_R drawn once per round) and Theorem 4.3 over %d rounds",
			g.BudgetMin, g.BudgetMax, g.SpentMin, g.SpentMax, within, l.paperRounds, g.DeltaMax, g.Theorem45Delta, g.Rounds)
		return g, nil
	}
	g.Theorem45Delta = float64(max(len(l.rounds), 1)) * g.DeltaMax
	g.Statement = fmt.Sprintf("(Φ, Δ)-PDP with Φ = the per-example budgets ε_i ∈ [%.4g, %.4g] (spent ε ∈ [%.4g, %.4g], %s) and Δ = {δ_i} ≤ %g, by %s over %d rounds%s; Theorem 4.5's Δ = R_max·δ = %g also holds",
		g.BudgetMin, g.BudgetMax, g.SpentMin, g.SpentMax, within, g.DeltaMax, l.basis(), g.Rounds, l.basisNote(), g.Theorem45Delta)
	return g, nil
}

// overBudget returns how many examples spent more than their budget (only
// inherited classes can, see class.inherited) and the largest excess.
func (l *Ledger) overBudget() (n int, most float64) {
	for _, c := range l.classes {
		if d := c.spent - c.budget.Epsilon; d > 0 {
			n += c.count
			most = math.Max(most, d)
		}
	}
	return n, most
}

// compositionBasis words, per built-in accountant, the per-example
// composition a ledger's guarantee rests on and its source (any other
// registered accountant: "per-example composition on the NAME accountant").
var compositionBasis = map[Accounting][2]string{
	AccountingRDP: {"individual RDP composition", " (Theorem 4.8)"},
	AccountingPLD: {"per-example composition of the privacy loss distributions of its Poisson-subsampled Gaussian steps", " (certified PLD upper bound; ZDW22 Theorems 10–11)"},
}

func (l *Ledger) basis() string {
	if b, ok := compositionBasis[l.acc]; ok {
		return b[0]
	}
	return "per-example composition on the " + string(l.acc) + " accountant"
}

func (l *Ledger) basisNote() string { return compositionBasis[l.acc][1] }
