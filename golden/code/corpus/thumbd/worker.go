package thumbd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Job asks for the thumbnails of one photo.
type Job struct {
	PhotoID string `json:"photo_id"`
	Key     string `json:"key"`
	Video   bool   `json:"video"`
}

// Store is what the worker needs from storage and the database.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	PutVariant(ctx context.Context, photoID string, v Variant, data []byte) error
	// InsertVariant must ignore duplicates: ON CONFLICT (photo_id, size, format) DO NOTHING.
	InsertVariant(ctx context.Context, photoID string, v Variant) error
	MarkReady(ctx context.Context, photoID string) error
}

// ErrPermanent marks jobs that must not be retried (corrupt or oversized images).
var ErrPermanent = errors.New("permanent failure")

// HandleMessage processes one JetStream message. Long jobs send in-progress acks every 10 s so
// the 30 s ack wait does not redeliver them and create duplicate variants.
func HandleMessage(ctx context.Context, store Store, msg jetstream.Msg, job Job) error {
	stop := keepAlive(msg, 10*time.Second)
	defer stop()
	src, err := store.Get(ctx, job.Key)
	if err != nil {
		return fmt.Errorf("photo %s: fetch original: %w", job.PhotoID, err)
	}
	for _, v := range Variants {
		out, err := Resize(src, v)
		if err != nil {
			_ = msg.Term()
			return fmt.Errorf("photo %s: variant %d: %w: %v", job.PhotoID, v.Width, ErrPermanent, err)
		}
		if err := store.PutVariant(ctx, job.PhotoID, v, out); err != nil {
			return fmt.Errorf("photo %s: store variant %d: %w", job.PhotoID, v.Width, err)
		}
		if err := store.InsertVariant(ctx, job.PhotoID, v); err != nil {
			return err
		}
	}
	if err := store.MarkReady(ctx, job.PhotoID); err != nil {
		return err
	}
	return msg.Ack()
}

func keepAlive(msg jetstream.Msg, every time.Duration) func() {
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				_ = msg.InProgress()
			case <-done:
				return
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

// ReconcileStuck republishes thumbnail jobs for photos stuck in processing for over 15 minutes
// (thumbd crashed between writing variants and publishing done).
func ReconcileStuck(ctx context.Context, list func(context.Context, time.Duration) ([]Job, error), publish func(Job) error) (int, error) {
	stuck, err := list(ctx, 15*time.Minute)
	if err != nil {
		return 0, err
	}
	for _, j := range stuck {
		if err := publish(j); err != nil {
			return 0, fmt.Errorf("republish %s: %w", j.PhotoID, err)
		}
	}
	return len(stuck), nil
}
