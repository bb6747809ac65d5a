// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"golang.org/x/sys/unix"
	"twheel/twheel"
)

// Ids touched on activity expire once they have been silent for the
// wheel's timeout.
func Example() {
	w, err := twheel.Open(&twheel.Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	w.Touch(1, 2, 3)
	time.Sleep(50 * time.Millisecond)
	w.Touch(2) // 2 was active: 100 ms from now

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ev := make([]twheel.Event, 8)
	n, err := w.Wait(ctx, ev)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range ev[:n] {
		fmt.Println("silent:", e.ID) // 1 and 3 (2 expires later)
	}
}

// An id armed at its own timeout, with a payload, then looked up.
func ExampleWheel_Arm() {
	w, err := twheel.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	const order = 17
	w.Arm(twheel.Arm{ID: order, Timeout: 24 * time.Hour, Data: 4999})
	if q, err := w.Query(order); err == nil {
		fmt.Println(q.State, q.Data) // armed 4999
	}
	w.Cancel(order) // paid
	if _, err := w.Query(order); errors.Is(err, unix.ENOENT) {
		fmt.Println("gone")
	}
}

// A wheel saved to a file and restored after a restart: deadlines are
// kept on CLOCK_REALTIME, so a reboot in between is fine.
func ExampleWheel_Save() {
	w, err := twheel.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	w.Arm(twheel.Arm{ID: 1, Timeout: 365 * 24 * time.Hour}) // a reminder in a year
	if err := w.Save("/var/lib/app/wheel.snap"); err != nil {
		log.Fatal(err)
	}

	// ... later, in the new process:
	r, err := twheel.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	n, err := r.Restore("/var/lib/app/wheel.snap")
	fmt.Println(n, err)
}
