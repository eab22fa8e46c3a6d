package datasets

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// maxLIBSVMDim bounds the feature dimension of a LIBSVM file, since rows
// are stored densely.
const maxLIBSVMDim = 1 << 24

// LoadLIBSVM reads LIBSVM text data: one example per line,
// "label index:value index:value ...", with 1-based feature indices (in
// any order, each at most once per line). Missing features are 0. Blank
// lines and text after '#' are ignored.
//
// dim is the number of features; an index above dim is an error. With
// dim = 0 it is the largest index seen.
//
// Targets holds each label as read. Labels are set when they are classes:
// labels all in {-1, +1} become 0 (for -1) and 1 (for +1) with Classes 2;
// non-negative integer labels are kept, with Classes the largest plus one.
// Otherwise (regression data) Labels is nil and Classes 0.
//
// r is read as plain text; Load and loadLIBSVMFile decompress gzip and
// bzip2 files.
func LoadLIBSVM(r io.Reader, dim int) (*Dataset, error) {
	if dim < 0 || dim > maxLIBSVMDim {
		return nil, fmt.Errorf("datasets: LIBSVM dimension %d outside [0, %d]", dim, maxLIBSVMDim)
	}
	var (
		targets []float32
		rowPtr  = []int{0}
		cols    []int32
		vals    []float32
		maxIdx  int
		pairs   []libsvmPair
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if i := bytes.IndexByte(b, '#'); i >= 0 {
			b = b[:i]
		}
		fields := bytes.Fields(b)
		if len(fields) == 0 {
			continue
		}
		y, err := strconv.ParseFloat(string(fields[0]), 32)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("datasets: LIBSVM line %d: invalid label %q", line, fields[0])
		}
		pairs = pairs[:0]
		for _, f := range fields[1:] {
			colon := bytes.IndexByte(f, ':')
			if colon < 0 {
				return nil, fmt.Errorf("datasets: LIBSVM line %d: %q is not index:value", line, f)
			}
			idx, err := strconv.Atoi(string(f[:colon]))
			if err != nil || idx < 1 {
				return nil, fmt.Errorf("datasets: LIBSVM line %d: invalid feature index %q (indices start at 1)", line, f[:colon])
			}
			if limit := cmp.Or(dim, maxLIBSVMDim); idx > limit {
				return nil, fmt.Errorf("datasets: LIBSVM line %d: feature index %d exceeds dimension %d", line, idx, limit)
			}
			v, err := strconv.ParseFloat(string(f[colon+1:]), 32)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("datasets: LIBSVM line %d: invalid value %q", line, f[colon+1:])
			}
			pairs = append(pairs, libsvmPair{int32(idx - 1), float32(v)})
		}
		if !slices.IsSortedFunc(pairs, cmpPair) {
			slices.SortFunc(pairs, cmpPair)
		}
		for k, p := range pairs {
			if k > 0 && pairs[k-1].col == p.col {
				return nil, fmt.Errorf("datasets: LIBSVM line %d: feature index %d repeated", line, p.col+1)
			}
			cols = append(cols, p.col)
			vals = append(vals, p.val)
			maxIdx = max(maxIdx, int(p.col)+1)
		}
		rowPtr = append(rowPtr, len(cols))
		targets = append(targets, float32(y))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("datasets: LIBSVM line %d: line too long", line+1)
		}
		return nil, fmt.Errorf("datasets: reading LIBSVM data after line %d: %w", line, err)
	}
	if len(targets) == 0 {
		return nil, errors.New("datasets: LIBSVM data has no examples")
	}
	if dim == 0 {
		dim = maxIdx
	}
	if dim == 0 {
		return nil, errors.New("datasets: LIBSVM data has no features; pass the dimension")
	}
	n := len(targets)
	d := &Dataset{X: make([]float32, n*dim), Shape: []int{dim}, Targets: targets, N: n}
	for i := 0; i < n; i++ {
		row := d.X[i*dim : (i+1)*dim]
		for k := rowPtr[i]; k < rowPtr[i+1]; k++ {
			row[cols[k]] = vals[k]
		}
	}
	d.Labels, d.Classes = libsvmClasses(targets)
	return d, nil
}

type libsvmPair struct {
	col int32
	val float32
}

func cmpPair(a, b libsvmPair) int { return int(a.col) - int(b.col) }

// libsvmClasses derives class labels from targets (see LoadLIBSVM).
func libsvmClasses(targets []float32) ([]int, int) {
	pm := true
	maxInt := -1
	for _, t := range targets {
		pm = pm && (t == 1 || t == -1)
		if maxInt >= -1 && t >= 0 && t == float32(math.Trunc(float64(t))) && t < 1<<20 {
			maxInt = max(maxInt, int(t))
		} else {
			maxInt = -2 // not all non-negative integers
		}
	}
	labels := make([]int, len(targets))
	switch {
	case pm:
		for i, t := range targets {
			if t > 0 {
				labels[i] = 1
			}
		}
		return labels, 2
	case maxInt >= 0:
		for i, t := range targets {
			labels[i] = int(t)
		}
		return labels, maxInt + 1
	}
	return nil, 0
}

// loadLIBSVMFile reads and verifies a LIBSVM file (plain, gzip or bzip2).
func loadLIBSVMFile(path string, spec fileSpec, dim int) (*Dataset, error) {
	var d *Dataset
	err := readVerified(path, spec, func(r io.Reader) error {
		var err error
		d, err = LoadLIBSVM(r, dim)
		return err
	})
	return d, err
}
