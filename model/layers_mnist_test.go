package model_test

import (
	"path/filepath"
	"testing"

	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
)

// TestNetworkFileTrainsOnMNIST trains the network of testdata/mnist-gn.json
// (every parameterised kind, group norm, tanh, both poolings) with plain SGD
// on 3,000 MNIST training images and checks its accuracy on 1,000 test
// images, far above chance (10%).
func TestNetworkFileTrainsOnMNIST(t *testing.T) {
	nw, err := model.ReadNetworkFile(filepath.Join("testdata", "mnist-gn.json"))
	if err != nil {
		t.Fatal(err)
	}
	train, err := datasets.Load("mnist", "train", datasets.ResolveDataDir(""))
	if err != nil {
		t.Skipf("MNIST not available: %v", err)
	}
	test, err := datasets.Load("mnist", "test", datasets.ResolveDataDir(""))
	if err != nil {
		t.Skipf("MNIST not available: %v", err)
	}
	m, err := model.New(model.Spec{Arch: "mnist-gn", InputShape: train.Shape, Classes: train.Classes, Network: &nw}, 1)
	if err != nil {
		t.Fatal(err)
	}
	const (
		nTrain, nTest = 3000, 1000
		batch, epochs = 50, 3
		lr            = 0.1
	)
	d := train.Dim()
	P := m.NumParams()
	grad, step := make([]float32, P), make([]float32, P)
	accuracy := func() float64 {
		out := make([]float32, nTest*10)
		if err := m.Predict(test.X[:nTest*d], nTest, out); err != nil {
			t.Fatal(err)
		}
		right := 0
		for i := 0; i < nTest; i++ {
			best := 0
			for c := 1; c < 10; c++ {
				if out[i*10+c] > out[i*10+best] {
					best = c
				}
			}
			if best == test.Labels[i] {
				right++
			}
		}
		return float64(right) / nTest
	}
	before := accuracy()
	var firstLoss, lastLoss float64
	for e := 0; e < epochs; e++ {
		for s := 0; s < nTrain; s += batch {
			b := model.Batch{X: train.X[s*d : (s+batch)*d], Labels: train.Labels[s : s+batch], M: batch}
			loss, err := m.BatchGrad(b, grad)
			if err != nil {
				t.Fatal(err)
			}
			if e == 0 && s == 0 {
				firstLoss = loss / batch
			}
			lastLoss = loss / batch
			for i, g := range grad {
				step[i] = lr / batch * g
			}
			if err := m.Step(step); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := accuracy()
	t.Logf("%d parameters; loss %.3f → %.3f; test accuracy %.3f → %.3f", P, firstLoss, lastLoss, before, after)
	if after < 0.8 || lastLoss > firstLoss/2 {
		t.Errorf("did not learn: loss %.3f → %.3f, accuracy %.3f → %.3f", firstLoss, lastLoss, before, after)
	}
}
