package corruption

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

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

// Kinds lists the accepted kinds.
func Kinds() []string {
	return []string{None, LabelFlip, TargetedLabelFlip, Feature, GradientNoise, GradientSignFlip}
}

// Plan is one run's corruption: its kind and the fixed set of corrupted
// training examples, exactly round(ratio·n) of them, chosen once from the
// seed. A Plan is immutable after New.
type Plan struct {
	kind  string
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
	if !slices.Contains(Kinds(), kind) {
		return nil, fmt.Errorf("corruption: unknown kind %q (known: %v)", kind, Kinds())
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
	p := &Plan{kind: kind, ratio: ratio, n: n, seed: seed, mask: make([]bool, n)}
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

// CorruptsData reports whether the kind changes labels or features.
func (p *Plan) CorruptsData() bool {
	return p.kind == LabelFlip || p.kind == TargetedLabelFlip || p.kind == Feature
}

// CorruptsGradients reports whether the kind changes per-example gradients.
func (p *Plan) CorruptsGradients() bool {
	return p.kind == GradientNoise || p.kind == GradientSignFlip
}

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

// ApplyData corrupts the training set in place: x holds n rows of d features
// (row-major) and labels the n class indices in [0, classes). Label kinds
// change labels only (targeted: y → classes−1−y, which leaves the middle
// class of an odd classes unchanged; label-flip: a uniformly random label
// ≠ y), feature adds N(0, NoiseStd²) to every feature of a corrupted row
// (without clamping); other kinds do nothing. Randomness comes from the
// plan's seed, so the result is reproducible. Apply it once per load.
func (p *Plan) ApplyData(x []float32, d int, labels []int, classes int) error {
	switch p.kind {
	case LabelFlip, TargetedLabelFlip:
		if len(labels) != p.n {
			return fmt.Errorf("corruption %s: got %d labels, plan is for %d examples", p.kind, len(labels), p.n)
		}
		if classes < 2 {
			return fmt.Errorf("corruption %s: needs at least 2 classes, got %d", p.kind, classes)
		}
		for _, i := range p.idx {
			if labels[i] < 0 || labels[i] >= classes {
				return fmt.Errorf("corruption %s: label %d of example %d outside [0, %d)", p.kind, labels[i], i, classes)
			}
		}
		rng := randstream.FromSeed(p.seed).Stream(streamData, 0)
		for _, i := range p.idx {
			y := labels[i]
			if p.kind == TargetedLabelFlip {
				labels[i] = classes - 1 - y
				continue
			}
			o := rng.IntN(classes - 1)
			if o >= y {
				o++
			}
			labels[i] = o
		}
	case Feature:
		if d <= 0 || len(x) != p.n*d {
			return fmt.Errorf("corruption %s: got %d features with row size %d, plan is for %d examples", p.kind, len(x), d, p.n)
		}
		rng := randstream.FromSeed(p.seed).Stream(streamData, 0)
		for _, i := range p.idx {
			for j := i * d; j < (i+1)*d; j++ {
				x[j] += float32(NoiseStd * rng.NormFloat64())
			}
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
	switch p.kind {
	case GradientNoise:
		if rng == nil {
			return fmt.Errorf("corruption %s: nil random generator", p.kind)
		}
		for j := range row {
			row[j] += float32(NoiseStd * rng.NormFloat64())
		}
	case GradientSignFlip:
		for j := range row {
			row[j] = -row[j]
		}
	}
	return nil
}
