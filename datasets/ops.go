package datasets

import (
	"errors"
	"fmt"
	"math"
)

// Validate checks that d is internally consistent: N ≥ 0, len(X) = N·Dim(),
// Labels (if any) in [0, Classes), Targets (if any) of length N and finite
// features and targets.
func (d *Dataset) Validate() error {
	if d == nil {
		return errors.New("datasets: nil dataset")
	}
	if d.N < 0 {
		return fmt.Errorf("datasets: %s: negative size %d", d.Name, d.N)
	}
	if len(d.Shape) == 0 {
		return fmt.Errorf("datasets: %s: empty shape", d.Name)
	}
	for _, s := range d.Shape {
		if s <= 0 {
			return fmt.Errorf("datasets: %s: invalid shape %v", d.Name, d.Shape)
		}
	}
	if len(d.X) != d.N*d.Dim() {
		return fmt.Errorf("datasets: %s: len(X) = %d, want N·D = %d·%d", d.Name, len(d.X), d.N, d.Dim())
	}
	if d.Labels == nil && d.Targets == nil {
		return fmt.Errorf("datasets: %s: neither labels nor targets", d.Name)
	}
	if d.Labels != nil {
		if len(d.Labels) != d.N {
			return fmt.Errorf("datasets: %s: %d labels for %d examples", d.Name, len(d.Labels), d.N)
		}
		if d.Classes < 1 {
			return fmt.Errorf("datasets: %s: %d classes", d.Name, d.Classes)
		}
		for i, y := range d.Labels {
			if y < 0 || y >= d.Classes {
				return fmt.Errorf("datasets: %s: label %d of example %d outside [0, %d)", d.Name, y, i, d.Classes)
			}
		}
	}
	if d.Targets != nil {
		if len(d.Targets) != d.N {
			return fmt.Errorf("datasets: %s: %d targets for %d examples", d.Name, len(d.Targets), d.N)
		}
		for i, t := range d.Targets {
			if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
				return fmt.Errorf("datasets: %s: target of example %d is %v", d.Name, i, t)
			}
		}
	}
	for i, v := range d.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("datasets: %s: feature %d of example %d is %v", d.Name, i%d.Dim(), i/d.Dim(), v)
		}
	}
	return nil
}

// Gather copies the examples idx into preallocated buffers: row k of x
// (length ≥ len(idx)·Dim()) receives example idx[k]'s features, labels[k]
// its label and targets[k] its target. A nil buffer is skipped. It returns
// an error, and copies nothing, if an index is out of range, a buffer is too
// short, or labels/targets are requested but the dataset has none.
func (d *Dataset) Gather(idx []int, x []float32, labels []int, targets []float32) error {
	dim := d.Dim()
	for k, i := range idx {
		if i < 0 || i >= d.N {
			return fmt.Errorf("datasets: %s: Gather index %d (position %d) outside [0, %d)", d.Name, i, k, d.N)
		}
	}
	if x != nil && len(x) < len(idx)*dim {
		return fmt.Errorf("datasets: %s: Gather x buffer has %d values, need %d", d.Name, len(x), len(idx)*dim)
	}
	if labels != nil {
		if d.Labels == nil {
			return fmt.Errorf("datasets: %s: Gather asked for labels but the dataset has none", d.Name)
		}
		if len(labels) < len(idx) {
			return fmt.Errorf("datasets: %s: Gather labels buffer has %d entries, need %d", d.Name, len(labels), len(idx))
		}
	}
	if targets != nil {
		if d.Targets == nil {
			return fmt.Errorf("datasets: %s: Gather asked for targets but the dataset has none", d.Name)
		}
		if len(targets) < len(idx) {
			return fmt.Errorf("datasets: %s: Gather targets buffer has %d entries, need %d", d.Name, len(targets), len(idx))
		}
	}
	for k, i := range idx {
		if x != nil {
			copy(x[k*dim:(k+1)*dim], d.X[i*dim:(i+1)*dim])
		}
		if labels != nil {
			labels[k] = d.Labels[i]
		}
		if targets != nil {
			targets[k] = d.Targets[i]
		}
	}
	return nil
}

// Subset returns a new dataset holding copies of the examples idx, in that
// order (indices may repeat). Like slice indexing, it panics if an index is
// out of range; use Gather to get an error instead.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{
		Name:    d.Name,
		X:       make([]float32, len(idx)*d.Dim()),
		Shape:   append([]int(nil), d.Shape...),
		Classes: d.Classes,
		N:       len(idx),
	}
	if d.Labels != nil {
		s.Labels = make([]int, len(idx))
	}
	if d.Targets != nil {
		s.Targets = make([]float32, len(idx))
	}
	if err := d.Gather(idx, s.X, s.Labels, s.Targets); err != nil {
		panic(err)
	}
	return s
}
