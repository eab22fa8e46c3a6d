package corruption

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/privtrain/privtrain/internal/registry"
	"github.com/privtrain/privtrain/randstream"
)

// Kinds of corruption accepted by New.
const (
	None              = "none"
	LabelFlip         = "label-flip"          // label → uniformly random other label
	TargetedLabelFlip = "targeted-label-flip" // label → C−1−label
	Feature           = "feature"             // x → x + N(0, 100) per feature
	GradientNoise     = "gradient-noise"      // g → g + N(0, 100) per coordinate
	GradientSignFlip  = "gradient-sign-flip"  // g → −g
)

// NoiseStd is the standard deviation of feature and gradient noise: the
// N(0, 100) of the PTR paper's appendix B.1.1.
const NoiseStd = 10

// Random streams derived from the seed.
const (
	streamSelect = "corruption-select"
	streamData   = "corruption-data"
)

// TrainingSet is the training data a data corruption modifies in place.
type TrainingSet struct {
	// X holds N rows of D features, row-major (nil if the kind ignores it).
	X []float32
	D int
	// Labels holds the N class indices in [0, Classes) (nil if none).
	Labels  []int
	Classes int
	// N is the number of examples the plan is for.
	N int
}

// Kind is a corruption model: what happens to a corrupted example. At least
// one of Data and Gradient is set.
type Kind struct {
	// Data corrupts the rows idx (sorted, distinct, in [0, N)) of the
	// training set in place, once per run, and reports missing or invalid
	// inputs as errors. rng is the plan's data stream (seeded by the plan);
	// drawing from it in the order of idx keeps runs reproducible.
	Data func(ts TrainingSet, idx []int, rng *rand.Rand) error
	// Gradient corrupts row, the per-example gradient of a corrupted
	// example, in place, at every step before clipping. rng is the step's
	// attacker stream (nil when the caller has none).
	Gradient func(row []float32, rng *rand.Rand) error
}

// kinds maps each kind's name to its model. It is written only by Register
// (the built-ins register in init below, other packages in theirs).
var kinds = registry.New[Kind]("corruption", "kind")

// Register makes a corruption kind available to New under name, as
// database/sql's Register does for drivers: call it from the init function
// of the package that defines the kind. It panics if name is empty or
// "none", if k has neither Data nor Gradient, or if name is already
// registered.
func Register(name string, k Kind) {
	if name == "" || name == None {
		panic("corruption: Register with the reserved kind name " + strconv.Quote(name))
	}
	if k.Data == nil && k.Gradient == nil {
		panic("corruption: Register of kind " + strconv.Quote(name) + " that corrupts neither data nor gradients")
	}
	kinds.Register(name, k)
}

// The built-in kinds register themselves like any other.
func init() {
	Register(LabelFlip, Kind{Data: flipLabels(false)})
	Register(TargetedLabelFlip, Kind{Data: flipLabels(true)})
	Register(Feature, Kind{Data: featureNoise})
	Register(GradientNoise, Kind{Gradient: gradientNoise})
	Register(GradientSignFlip, Kind{Gradient: signFlip})
}

// Kinds lists the accepted kinds: "none", then the registered kinds in
// lexical order.
func Kinds() []string {
	return append([]string{None}, kinds.Names()...)
}

func lookup(name string) (Kind, bool) { return kinds.Lookup(name) }

// Plan is one run's corruption: its kind and the fixed set of corrupted
// training examples, exactly round(ratio·n) of them, chosen once from the
// seed. A Plan is immutable after New.
type Plan struct {
	kind  string
	model Kind // zero for "none"
	ratio float64
	n     int
	seed  uint64
	idx   []int  // sorted corrupted indices
	mask  []bool // mask[i]: example i is corrupted
}

// New chooses round(ratio·n) of n examples uniformly at random (without
// replacement, from seed) to be corrupted by kind. Kind "none" requires
// ratio 0.
func New(kind string, ratio float64, n int, seed uint64) (*Plan, error) {
	model, ok := lookup(kind)
	if !ok && kind != None {
		return nil, fmt.Errorf("corruption: unknown kind %q; registered: %s", kind, strings.Join(Kinds(), ", "))
	}
	if !(ratio >= 0 && ratio <= 1) {
		return nil, fmt.Errorf("corruption: ratio must be in [0, 1], got %v", ratio)
	}
	if kind == None && ratio != 0 {
		return nil, fmt.Errorf("corruption: kind %q with ratio %v: choose a kind or set the ratio to 0", kind, ratio)
	}
	if n < 0 {
		return nil, fmt.Errorf("corruption: number of examples must be ≥ 0, got %d", n)
	}
	k := int(math.Round(ratio * float64(n)))
	p := &Plan{kind: kind, model: model, ratio: ratio, n: n, seed: seed, mask: make([]bool, n)}
	// Partial Fisher–Yates: the first k entries of a uniform permutation.
	rng := randstream.FromSeed(seed).Stream(streamSelect, 0)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < k; i++ {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	p.idx = perm[:k:k]
	slices.Sort(p.idx)
	for _, i := range p.idx {
		p.mask[i] = true
	}
	return p, nil
}

// Kind returns the corruption kind.
func (p *Plan) Kind() string { return p.kind }

// Count returns the number of corrupted examples.
func (p *Plan) Count() int { return len(p.idx) }

// Indices returns the corrupted example indices in increasing order (a copy).
func (p *Plan) Indices() []int { return slices.Clone(p.idx) }

// IsCorrupted reports whether example i is corrupted (false out of range).
func (p *Plan) IsCorrupted(i int) bool { return i >= 0 && i < p.n && p.mask[i] }

// CorruptsData reports whether the kind changes the training data.
func (p *Plan) CorruptsData() bool { return p.model.Data != nil }

// CorruptsGradients reports whether the kind changes per-example gradients.
func (p *Plan) CorruptsGradients() bool { return p.model.Gradient != nil }

// Record is the exportable description of a plan, for the run directory.
type Record struct {
	Kind    string  `json:"kind"`
	Ratio   float64 `json:"ratio"`
	N       int     `json:"n"`
	Seed    uint64  `json:"seed"`
	Indices []int   `json:"indices"`
}

// Record describes the plan, including every corrupted index.
func (p *Plan) Record() Record {
	return Record{Kind: p.kind, Ratio: p.ratio, N: p.n, Seed: p.seed, Indices: p.Indices()}
}

// ApplyData corrupts the training set in place with the kind's Data
// function: x holds n rows of d features (row-major) and labels the n class
// indices in [0, classes). Built-in kinds: label kinds change labels only
// (targeted: y → classes−1−y, which leaves the middle class of an odd
// classes unchanged; label-flip: a uniformly random label ≠ y), feature
// adds N(0, NoiseStd²) to every feature of a corrupted row (without
// clamping); gradient kinds do nothing here. Randomness comes from the
// plan's seed, so the result is reproducible. Apply it once per load.
func (p *Plan) ApplyData(x []float32, d int, labels []int, classes int) error {
	if p.model.Data == nil {
		return nil
	}
	rng := randstream.FromSeed(p.seed).Stream(streamData, 0)
	ts := TrainingSet{X: x, D: d, Labels: labels, Classes: classes, N: p.n}
	if err := p.model.Data(ts, p.idx, rng); err != nil {
		return fmt.Errorf("corruption %s: %w", p.kind, err)
	}
	return nil
}

// flipLabels is label-flip (a uniformly random other label) or, targeted,
// targeted-label-flip (y → C−1−y).
func flipLabels(targeted bool) func(TrainingSet, []int, *rand.Rand) error {
	return func(ts TrainingSet, idx []int, rng *rand.Rand) error {
		if len(ts.Labels) != ts.N {
			return fmt.Errorf("got %d labels, plan is for %d examples", len(ts.Labels), ts.N)
		}
		if ts.Classes < 2 {
			return fmt.Errorf("needs at least 2 classes, got %d", ts.Classes)
		}
		for _, i := range idx {
			if ts.Labels[i] < 0 || ts.Labels[i] >= ts.Classes {
				return fmt.Errorf("label %d of example %d outside [0, %d)", ts.Labels[i], i, ts.Classes)
			}
		}
		for _, i := range idx {
			y := ts.Labels[i]
			if targeted {
				ts.Labels[i] = ts.Classes - 1 - y
				continue
			}
			o := rng.IntN(ts.Classes - 1)
			if o >= y {
				o++
			}
			ts.Labels[i] = o
		}
		return nil
	}
}

// featureNoise adds N(0, NoiseStd²) to every feature of a corrupted row.
func featureNoise(ts TrainingSet, idx []int, rng *rand.Rand) error {
	if ts.D <= 0 || len(ts.X) != ts.N*ts.D {
		return fmt.Errorf("got %d features with row size %d, plan is for %d examples", len(ts.X), ts.D, ts.N)
	}
	for _, i := range idx {
		for j := i * ts.D; j < (i+1)*ts.D; j++ {
			ts.X[j] += float32(NoiseStd * rng.NormFloat64())
		}
	}
	return nil
}

// CorruptGradient corrupts the per-example gradient row of training example
// i in place, before clipping: gradient-noise adds N(0, NoiseStd²) to every
// coordinate (drawn from rng), gradient-sign-flip negates it. It does
// nothing for uncorrupted examples or non-gradient kinds.
func (p *Plan) CorruptGradient(i int, row []float32, rng *rand.Rand) error {
	if i < 0 || i >= p.n {
		return fmt.Errorf("corruption %s: example index %d outside [0, %d)", p.kind, i, p.n)
	}
	if !p.mask[i] {
		return nil
	}
	if p.model.Gradient == nil {
		return nil
	}
	if err := p.model.Gradient(row, rng); err != nil {
		return fmt.Errorf("corruption %s: %w", p.kind, err)
	}
	return nil
}

// gradientNoise adds N(0, NoiseStd²) to every coordinate.
func gradientNoise(row []float32, rng *rand.Rand) error {
	if rng == nil {
		return fmt.Errorf("nil random generator")
	}
	for j := range row {
		row[j] += float32(NoiseStd * rng.NormFloat64())
	}
	return nil
}

// signFlip negates the gradient.
func signFlip(row []float32, _ *rand.Rand) error {
	for j := range row {
		row[j] = -row[j]
	}
	return nil
}
