// Package thumbd generates photo and video thumbnails with libvips (through govips).
package thumbd

import (
	"fmt"

	"github.com/davidbyttow/govips/v2/vips"
)

// Variant is one generated size and format.
type Variant struct {
	Width  int
	Format vips.ImageType
}

// Variants generated for every photo; 2048 is generated lazily on first request.
var Variants = []Variant{{256, vips.ImageTypeWEBP}, {1024, vips.ImageTypeWEBP}, {256, vips.ImageTypeJPEG}}

// MaxMegapixels rejects images that would not fit the pod's memory limit.
const MaxMegapixels = 400

// Startup initialises libvips once per process; calling it per request crashed under load.
func Startup(concurrency int) {
	vips.Startup(&vips.Config{ConcurrencyLevel: concurrency})
}

// Resize loads an image sequentially (shrink-on-load keeps memory flat on huge panoramas),
// applies the EXIF orientation, converts to sRGB and encodes one variant.
func Resize(src []byte, v Variant) ([]byte, error) {
	img, err := vips.LoadImageFromBuffer(src, &vips.ImportParams{Access: vips.AccessSequential})
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	defer img.Close()
	if mp := img.Width() * img.Height() / 1_000_000; mp > MaxMegapixels {
		return nil, fmt.Errorf("image is %d megapixels, the limit is %d", mp, MaxMegapixels)
	}
	// HEIC from iPhones stores rotation in EXIF; without this portraits come out sideways.
	if err := img.AutoRotate(); err != nil {
		return nil, fmt.Errorf("autorotate: %w", err)
	}
	// Display P3 photos look washed out unless converted with their ICC profile.
	if err := img.TransformICCProfile(vips.SRGBIEC6196620ProfilePath); err != nil {
		return nil, fmt.Errorf("icc to sRGB: %w", err)
	}
	scale := float64(v.Width) / float64(img.Width())
	if scale < 1 {
		if err := img.Resize(scale, vips.KernelLanczos3); err != nil {
			return nil, fmt.Errorf("resize to %d: %w", v.Width, err)
		}
	}
	if err := img.RemoveMetadata(); err != nil {
		return nil, err
	}
	return encode(img, v.Format)
}

func encode(img *vips.ImageRef, format vips.ImageType) ([]byte, error) {
	switch format {
	case vips.ImageTypeWEBP:
		out, _, err := img.ExportWebp(&vips.WebpExportParams{Quality: 78, StripMetadata: true})
		return out, err
	case vips.ImageTypeJPEG:
		out, _, err := img.ExportJpeg(&vips.JpegExportParams{Quality: 82, StripMetadata: true, Interlace: true})
		return out, err
	default:
		return nil, fmt.Errorf("unsupported format %v", format)
	}
}
