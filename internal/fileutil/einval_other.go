//go:build !unix

package fileutil

func isEINVAL(error) bool { return false }
