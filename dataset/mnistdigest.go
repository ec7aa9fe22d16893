package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// MNISTDigest identifies the data a split reads from dir, wherever the
// folder is: "sha256:" and the SHA-256 of the decompressed content of the
// split's files (SplitFull: all four MNIST files, SplitT10k: the two t10k
// ones), each preceded by its name, in a fixed order. A folder holding the
// files plain and one holding them gzipped give the same digest.
func MNISTDigest(dir, split string) (string, error) {
	names, err := mnistFiles(0, 1, split)
	if err != nil {
		return "", err
	}
	paths, err := findMNISTFiles(dir, names)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, name := range names {
		if err := hashFile(h, name, paths[name]); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes name, a NUL, the decompressed length and the content of
// path to h: the length and name frame each file, so that no two file
// sets give the same stream.
func hashFile(h io.Writer, name, path string) error {
	in, closeIn, err := openDecompressed(path)
	if err != nil {
		return fmt.Errorf("mnist: %w", err)
	}
	defer closeIn()
	content := sha256.New()
	n, err := io.Copy(content, in)
	if err != nil {
		return fmt.Errorf("mnist: %s: %w", path, err)
	}
	fmt.Fprintf(h, "%s\x00%d\x00%x\x00", name, n, content.Sum(nil))
	return nil
}
