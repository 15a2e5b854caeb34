package thumbd

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
)

// probeDuration asks ffprobe for a video's duration in seconds.
func probeDuration(ctx context.Context, path string) (float64, error) {
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path).Output()
	if err != nil {
		return 0, fmt.Errorf("ffprobe %s: %w", path, err)
	}
	return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
}

// PosterFrameTime picks where to grab the poster frame: 10% into the video, at most 3 s,
// because the first frame of phone videos is usually black.
func PosterFrameTime(duration float64) float64 {
	return math.Min(duration*0.10, 3.0)
}

// ExtractPosterFrame grabs three candidate frames around the poster time and keeps the one with
// the most variance (the least likely to be black or blurred).
func ExtractPosterFrame(ctx context.Context, path string) ([]byte, error) {
	d, err := probeDuration(ctx, path)
	if err != nil {
		return nil, err
	}
	t := PosterFrameTime(d)
	var best []byte
	bestVar := -1.0
	for _, offset := range []float64{-0.5, 0, 0.5} {
		at := math.Max(t+offset, 0)
		var buf bytes.Buffer
		cmd := exec.CommandContext(ctx, "ffmpeg", "-ss", fmt.Sprintf("%.2f", at), "-i", path, "-frames:v", "1", "-f", "image2pipe", "-vcodec", "png", "-")
		cmd.Stdout = &buf
		if err := cmd.Run(); err != nil {
			continue
		}
		if v := frameVariance(buf.Bytes()); v > bestVar {
			best, bestVar = buf.Bytes(), v
		}
	}
	if best == nil {
		return nil, fmt.Errorf("video %s: no frame could be decoded (HEVC support missing?)", path)
	}
	return best, nil
}

// frameVariance is the variance of byte values, a cheap proxy for "not a flat black frame".
func frameVariance(png []byte) float64 {
	if len(png) == 0 {
		return 0
	}
	var sum, sq float64
	for _, b := range png {
		sum += float64(b)
		sq += float64(b) * float64(b)
	}
	n := float64(len(png))
	mean := sum / n
	return sq/n - mean*mean
}
