package datasets

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
)

const (
	svhnURL     = "http://ufldl.stanford.edu/housenumbers/"
	svhnDir     = "svhn"
	svhnSide    = 32
	svhnImage   = 3 * svhnSide * svhnSide
	svhnMaxN    = 1 << 20 // more than any official file (extra_32x32.mat has 531,131)
	svhnClasses = 10
)

// svhnFiles holds the official cropped-digits files by split, with their
// MD5s (as recorded by torchvision and the datasets-mila annex keys).
var svhnFiles = map[string]fileSpec{
	"train": {name: "train_32x32.mat", sums: []checksum{md5sum("e26dedcc434d2e4c54c9b2d4a06d8373")}, url: svhnURL + "train_32x32.mat"},
	"test":  {name: "test_32x32.mat", sums: []checksum{md5sum("eb5a983be6a315427106f1b164d9cef3")}, url: svhnURL + "test_32x32.mat"},
}

// loadSVHN loads <dataDir>/svhn/{train,test}_32x32.mat.
func loadSVHN(split, dataDir string) (*Dataset, error) {
	if _, ok := svhnFiles[split]; !ok {
		return nil, splitError("svhn", split, "train", "test")
	}
	if err := requireDataDir("svhn", dataDir); err != nil {
		return nil, err
	}
	return loadSVHNFrom(split, filepath.Join(dataDir, svhnDir), svhnFiles)
}

// loadSVHNFrom loads a split from dir with the given checksum table.
func loadSVHNFrom(split, dir string, specs map[string]fileSpec) (*Dataset, error) {
	spec, ok := specs[split]
	if !ok {
		return nil, splitError("svhn", split, "train", "test")
	}
	d := &Dataset{Name: "svhn/" + split, Shape: []int{3, svhnSide, svhnSide}, Classes: svhnClasses}
	err := readVerified(filepath.Join(dir, spec.name), spec, func(r io.Reader) error {
		return readSVHN(r, d)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// readSVHN reads a cropped-digits MAT-file into d: X, uint8 32×32×3×N
// (MATLAB's X(row, column, channel, example), column-major), becomes
// channel-major (C, H, W) float32 images in [0, 1]; y, double N×1 with
// labels 1–10 (10 for the digit 0), becomes labels 0–9 (the digit).
func readSVHN(r io.Reader, d *Dataset) error {
	var sawX, sawY bool
	var labels []int
	err := readMAT(r, func(v *matVar) error {
		switch v.name {
		case "X":
			if sawX {
				return errors.New("variable X appears twice")
			}
			sawX = true
			return readSVHNImages(v, d, len(labels))
		case "y":
			if sawY {
				return errors.New("variable y appears twice")
			}
			sawY = true
			var err error
			labels, err = readSVHNLabels(v, d.N)
			return err
		}
		return fmt.Errorf("unexpected variable %q (want X and y)", v.name)
	})
	switch {
	case err != nil:
		return err
	case !sawX:
		return errors.New("no variable X (the images)")
	case !sawY:
		return errors.New("no variable y (the labels)")
	}
	d.Labels = labels
	return nil
}

// readSVHNImages reads X into d. wantN is the number of labels read
// before X (0 if none).
func readSVHNImages(v *matVar, d *Dataset, wantN int) error {
	if v.class != mxUINT8 || v.dataType != miUINT8 {
		return fmt.Errorf("variable X is a %s array stored as data type %d (want uint8, miUINT8 %d)", matClassName(v.class), v.dataType, miUINT8)
	}
	if len(v.dims) != 4 || v.dims[0] != svhnSide || v.dims[1] != svhnSide || v.dims[2] != 3 || v.dims[3] < 1 || v.dims[3] > svhnMaxN {
		return fmt.Errorf("variable X has dimensions %v (want 32×32×3×N, 1 ≤ N ≤ %d)", v.dims, svhnMaxN)
	}
	n := v.dims[3]
	if wantN > 0 && n != wantN {
		return fmt.Errorf("variable X has %d images but y has %d labels", n, wantN)
	}
	if v.size != int64(n)*svhnImage {
		return fmt.Errorf("variable X has %d bytes of data for %d images", v.size, n)
	}
	buf, img := make([]byte, svhnImage), make([]byte, svhnImage)
	for k := 0; k < n; k++ {
		if err := readFullCtx(v.data, buf, fmt.Sprintf("image %d of X", k)); err != nil {
			return err
		}
		// X(r, c, ch, k) is at r + 32c + 1024ch (+ 3072k): each channel plane
		// is stored column by column. Store it row by row: ch·1024 + 32r + c.
		for ch := 0; ch < 3; ch++ {
			p := ch * svhnSide * svhnSide
			for r := 0; r < svhnSide; r++ {
				for c := 0; c < svhnSide; c++ {
					img[p+r*svhnSide+c] = buf[p+c*svhnSide+r]
				}
			}
		}
		if len(d.X) == cap(d.X) {
			// Grow geometrically up to the size in the header, so a corrupt
			// header cannot make us allocate for data the file does not have.
			d.X = slices.Grow(d.X, min(max(len(d.X), 256*svhnImage), (n-k)*svhnImage))
		}
		off := len(d.X)
		d.X = append(d.X, make([]float32, svhnImage)...)
		bytesToUnit(d.X[off:], img)
	}
	d.N = n
	return nil
}

// readSVHNLabels reads y: N×1 doubles in 1–10, returned as digits 0–9.
// wantN is the number of images read before y (0 if none).
func readSVHNLabels(v *matVar, wantN int) ([]int, error) {
	if v.class != mxDOUBLE {
		return nil, fmt.Errorf("variable y is a %s array (want double)", matClassName(v.class))
	}
	if len(v.dims) != 2 || v.dims[1] != 1 || v.dims[0] < 1 || v.dims[0] > svhnMaxN {
		return nil, fmt.Errorf("variable y has dimensions %v (want N×1, 1 ≤ N ≤ %d)", v.dims, svhnMaxN)
	}
	if wantN > 0 && v.dims[0] != wantN {
		return nil, fmt.Errorf("variable y has %d labels but X has %d images", v.dims[0], wantN)
	}
	vals, err := v.float64s(svhnMaxN)
	if err != nil {
		return nil, err
	}
	labels := make([]int, len(vals))
	for i, y := range vals {
		if !(y >= 1 && y <= 10) || y != math.Trunc(y) {
			return nil, fmt.Errorf("label %v of example %d is not an integer in [1, 10]", y, i)
		}
		labels[i] = int(y) % 10
	}
	return labels, nil
}
