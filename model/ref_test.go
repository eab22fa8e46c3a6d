package model

import (
	"fmt"
	"math"
)

// This file is an independent float64 reference of the architectures,
// written from the documented layout with naive loops and images in
// (C, H, W) order throughout, for checking the fast implementation.

type refLayer struct {
	kind                 string // conv, pool, avgpool, relu, tanh, gn, flatten, dense
	outC, k, stride, pad int
	groups               int
	bias                 bool
}

// refSpecLayers returns the reference layers of a spec: its own network's
// (translated field by field) or the built-in listing of refArch.
func refSpecLayers(s Spec) []refLayer {
	if s.Network == nil {
		return refArch(s.Arch, s.Classes)
	}
	var r []refLayer
	for _, l := range s.Network.Layers {
		var rl refLayer
		switch l := l.(type) {
		case Conv:
			rl = refLayer{kind: "conv", outC: l.Out, k: l.Kernel, stride: l.Stride, pad: l.Pad, bias: !l.NoBias}
		case MaxPool:
			rl = refLayer{kind: "pool", k: l.Kernel, stride: l.Stride}
		case AvgPool:
			rl = refLayer{kind: "avgpool", k: l.Kernel, stride: l.Stride}
		case ReLU:
			rl = refLayer{kind: "relu"}
		case Tanh:
			rl = refLayer{kind: "tanh"}
		case GroupNorm:
			rl = refLayer{kind: "gn", groups: l.Groups}
		case Flatten:
			rl = refLayer{kind: "flatten"}
		case Dense:
			rl = refLayer{kind: "dense", outC: l.Out, bias: !l.NoBias}
		default:
			panic(fmt.Sprintf("reference: no layer kind %s", l.Kind()))
		}
		r = append(r, rl)
	}
	return r
}

// refSquared reports whether a spec uses the squared loss.
func refSquared(s Spec) bool {
	return s.Arch == "linreg" || s.Network != nil && s.Network.Loss == LossSquared
}

func refArch(arch string, classes int) []refLayer {
	switch arch {
	case "tfp-cnn", "pdp-cnn-mnist":
		return []refLayer{
			{kind: "conv", outC: 16, k: 8, stride: 2, pad: 3, bias: true}, {kind: "relu"}, {kind: "pool", k: 2, stride: 1},
			{kind: "conv", outC: 32, k: 4, stride: 2, bias: true}, {kind: "relu"}, {kind: "pool", k: 2, stride: 1},
			{kind: "dense", outC: 32, bias: true}, {kind: "relu"}, {kind: "dense", outC: classes, bias: true},
		}
	case "pdp-cnn-svhn":
		return []refLayer{
			{kind: "conv", outC: 6, k: 5, stride: 1, bias: true}, {kind: "relu"}, {kind: "pool", k: 2, stride: 2},
			{kind: "conv", outC: 16, k: 5, stride: 1, bias: true}, {kind: "relu"}, {kind: "pool", k: 2, stride: 2},
			{kind: "dense", outC: 120, bias: true}, {kind: "relu"}, {kind: "dense", outC: 84, bias: true}, {kind: "relu"},
			{kind: "dense", outC: classes, bias: true},
		}
	case "logreg":
		return []refLayer{{kind: "dense", outC: classes, bias: true}}
	case "linreg":
		return []refLayer{{kind: "dense", outC: 1}}
	}
	panic("unknown arch " + arch)
}

// refForward returns the outputs of one example x (C,H,W or D).
func refForward(s Spec, theta []float64, x []float64) []float64 {
	layers := refSpecLayers(s)
	a := append([]float64(nil), x...)
	image := len(s.InputShape) == 3
	conved := false // a convolution came first (flatten order (H, W, C), else (C, H, W))
	c, h, w := 1, 1, len(x)
	if image {
		c, h, w = s.InputShape[0], s.InputShape[1], s.InputShape[2]
	}
	off := 0
	for _, l := range layers {
		switch l.kind {
		case "conv":
			oh := (h+2*l.pad-l.k)/l.stride + 1
			ow := (w+2*l.pad-l.k)/l.stride + 1
			W := theta[off : off+l.k*l.k*c*l.outC]
			off += len(W)
			B := make([]float64, l.outC) // zero without a bias
			if l.bias {
				B = theta[off : off+l.outC]
				off += l.outC
			}
			out := make([]float64, l.outC*oh*ow)
			for o := 0; o < l.outC; o++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						s := B[o]
						for ki := 0; ki < l.k; ki++ {
							for kj := 0; kj < l.k; kj++ {
								hh, ww := i*l.stride-l.pad+ki, j*l.stride-l.pad+kj
								if hh < 0 || hh >= h || ww < 0 || ww >= w {
									continue
								}
								for ci := 0; ci < c; ci++ {
									s += W[o*l.k*l.k*c+(ki*l.k+kj)*c+ci] * a[(ci*h+hh)*w+ww]
								}
							}
						}
						out[(o*oh+i)*ow+j] = s
					}
				}
			}
			a, c, h, w = out, l.outC, oh, ow
			conved = true
		case "avgpool":
			oh, ow := (h-l.k)/l.stride+1, (w-l.k)/l.stride+1
			out := make([]float64, c*oh*ow)
			for ci := 0; ci < c; ci++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						var m float64
						for ki := 0; ki < l.k; ki++ {
							for kj := 0; kj < l.k; kj++ {
								m += a[(ci*h+i*l.stride+ki)*w+j*l.stride+kj]
							}
						}
						out[(ci*oh+i)*ow+j] = m / float64(l.k*l.k)
					}
				}
			}
			a, h, w = out, oh, ow
		case "tanh":
			for i := range a {
				a[i] = math.Tanh(a[i])
			}
		case "gn":
			gamma, beta := theta[off:off+c], theta[off+c:off+2*c]
			off += 2 * c
			cs := c / l.groups
			out := make([]float64, len(a))
			for g := 0; g < l.groups; g++ {
				grp := a[g*cs*h*w : (g+1)*cs*h*w] // channels g·cs … in (C, H, W) order
				var mu, v float64
				for _, t := range grp {
					mu += t
				}
				mu /= float64(len(grp))
				for _, t := range grp {
					v += (t - mu) * (t - mu)
				}
				v /= float64(len(grp))
				for k, t := range grp {
					ci := g*cs + k/(h*w)
					out[g*cs*h*w+k] = gamma[ci]*(t-mu)/math.Sqrt(v+1e-5) + beta[ci]
				}
			}
			a = out
		case "flatten":
			if conved {
				// Flatten in (H, W, C) order, as Keras does.
				f := make([]float64, len(a))
				for ci := 0; ci < c; ci++ {
					for i := 0; i < h; i++ {
						for j := 0; j < w; j++ {
							f[(i*w+j)*c+ci] = a[(ci*h+i)*w+j]
						}
					}
				}
				a = f
			}
			image = false
		case "pool":
			oh, ow := (h-l.k)/l.stride+1, (w-l.k)/l.stride+1
			out := make([]float64, c*oh*ow)
			for ci := 0; ci < c; ci++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						m := math.Inf(-1)
						for ki := 0; ki < l.k; ki++ {
							for kj := 0; kj < l.k; kj++ {
								m = math.Max(m, a[(ci*h+i*l.stride+ki)*w+j*l.stride+kj])
							}
						}
						out[(ci*oh+i)*ow+j] = m
					}
				}
			}
			a, h, w = out, oh, ow
		case "relu":
			for i := range a {
				a[i] = math.Max(a[i], 0)
			}
		case "dense":
			if image {
				// Flatten in (H, W, C) order, as Keras does.
				f := make([]float64, len(a))
				for ci := 0; ci < c; ci++ {
					for i := 0; i < h; i++ {
						for j := 0; j < w; j++ {
							f[(i*w+j)*c+ci] = a[(ci*h+i)*w+j]
						}
					}
				}
				a, image = f, false
			}
			in := len(a)
			W := theta[off : off+in*l.outC]
			off += len(W)
			out := make([]float64, l.outC)
			for o := range out {
				for p := 0; p < in; p++ {
					out[o] += a[p] * W[o*in+p]
				}
			}
			if l.bias {
				for o := range out {
					out[o] += theta[off+o]
				}
				off += l.outC
			}
			a = out
		}
	}
	return a
}

// refLoss is the per-example loss of the reference.
func refLoss(s Spec, theta, x []float64, label int, target float64) float64 {
	z := refForward(s, theta, x)
	if refSquared(s) {
		var n2 float64
		for _, v := range theta {
			n2 += v * v
		}
		r := z[0] - target
		return r*r/2 + s.L2/2*n2
	}
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, v)
	}
	var sum float64
	for _, v := range z {
		sum += math.Exp(v - m)
	}
	return math.Log(sum) + m - z[label]
}
