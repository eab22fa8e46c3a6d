package model

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestUsePreallocDo checks Gorgonia's UsePreallocDoer contract for every op
// of compiled graphs (all layer kinds and both losses): given a fitting
// preallocated value, an op writes its result there and returns it; given
// one that does not fit (or none), it returns its own buffer. The results
// must equal those of the graph's run.
func TestUsePreallocDo(t *testing.T) {
	specs := append([]Spec{
		{Arch: "tfp-cnn", InputShape: []int{1, 28, 28}, Classes: 10},
		{Arch: "linreg", InputShape: []int{6}, Classes: 1},
	}, customSpecs...)
	kinds := map[string]bool{}
	for _, s := range specs {
		m := perturbed(t, s, 1)
		n := m.(*net)
		g := n.w[0].graphs[1]
		b := randomBatch(s, g.n-3, rand.New(rand.NewPCG(2, 2))) // a padded chunk
		n.load(g, &b, 0, b.M)
		if err := g.run(); err != nil {
			t.Fatal(err)
		}
		ran := 0
		for _, node := range g.g.AllNodes() {
			op, ok := node.Op().(G.UsePreallocDoer)
			if !ok || node.Value() == nil {
				continue
			}
			want, err := G.CloneValue(node.Value())
			if err != nil {
				t.Fatal(err)
			}
			var in []G.Value
			for it := g.g.From(node.ID()); it.Next(); { // the op's inputs, in order
				in = append(in, it.Node().(*G.Node).Value())
			}
			name := s.Arch + "/" + node.Op().String()
			kinds[opKind(node.Op())] = true
			if _, scalar := want.(*G.F32); scalar {
				p := new(G.F32)
				got, err := op.UsePreallocDo(p, in...)
				if err != nil || got != G.Value(p) || *p != *want.(*G.F32) {
					t.Errorf("%s: UsePreallocDo gave %v (%v), want %v written into the given scalar", name, got, err, want)
				}
				ran++
				continue
			}
			wd, _ := f32s(want)
			shape := node.Shape()
			p := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float32, shape.TotalSize())))
			got, err := op.UsePreallocDo(p, in...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != G.Value(p) {
				t.Errorf("%s: UsePreallocDo did not return the preallocated value", name)
			}
			if !slices.Equal(p.Float32s(), wd) {
				t.Errorf("%s: preallocated result differs from the run's", name)
			}
			// A value of another shape is not written to.
			q := tensor.New(tensor.WithShape(shape[0]+1, shape[1]), tensor.WithBacking(make([]float32, (shape[0]+1)*shape[1])))
			got, err = op.UsePreallocDo(q, in...)
			gd, _ := f32s(got)
			if err != nil || got == G.Value(q) || !slices.Equal(gd, wd) || slices.ContainsFunc(q.Float32s(), func(v float32) bool { return v != 0 }) {
				t.Errorf("%s: with a misfit preallocated value: %v, same %v", name, err, got == G.Value(q))
			}
			ran++
		}
		if ran < len(n.layers) {
			t.Errorf("%s: only %d ops checked", s.Arch, ran)
		}
	}
	for _, k := range []string{"conv", "conv/dA", "dense", "dense/dA", "relu", "relu/dA", "pool", "pool/dA",
		"avgpool", "avgpool/dA", "tanh", "tanh/dA", "groupnorm", "groupnorm/dA", "loss", "loss/dZ"} {
		if !kinds[k] {
			t.Errorf("no %s op checked", k)
		}
	}
}

func opKind(op G.Op) string {
	switch op.(type) {
	case *convOp:
		return "conv"
	case *convBackOp:
		return "conv/dA"
	case *denseOp:
		return "dense"
	case *denseBackOp:
		return "dense/dA"
	case *reluOp:
		return "relu"
	case *reluBackOp:
		return "relu/dA"
	case *poolOp:
		return "pool"
	case *poolBackOp:
		return "pool/dA"
	case *avgPoolOp:
		return "avgpool"
	case *avgPoolBackOp:
		return "avgpool/dA"
	case *tanhOp:
		return "tanh"
	case *tanhBackOp:
		return "tanh/dA"
	case *groupNormOp:
		return "groupnorm"
	case *groupNormBackOp:
		return "groupnorm/dA"
	case *lossOp:
		return "loss"
	case *lossBackOp:
		return "loss/dZ"
	}
	return "other"
}
