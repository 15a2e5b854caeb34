package worker

import (
	"fmt"
	"image"
)

// ThumbnailJob describes one image to shrink.
type ThumbnailJob struct {
	ObjectKey string
	MaxWidth  int
}

// Run decodes the image and writes a thumbnail no wider than MaxWidth.
func (j *ThumbnailJob) Run(img image.Image) (image.Image, error) {
	if j.MaxWidth <= 0 {
		return nil, fmt.Errorf("thumbnail %s: max width must be positive", j.ObjectKey)
	}
	return resize(img, j.MaxWidth), nil
}

// PurgeTmp removes thumbnails left in /var/tmp by crashed jobs.
func PurgeTmp(dir string) (int, error) {
	return removeOlderThan(dir, 24)
}
