/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of twheel: /sys/kernel/tracing/events/twheel/.
 *
 * Each event carries the fd's wheel id (the wheel_id of its fdinfo, a
 * number unique since the module was loaded), so that the events of one
 * fd can be told apart and matched to its process.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM twheel

#if !defined(_TWHEEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TWHEEL_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(twheel_id,
		    TP_PROTO(u64 wheel, u64 id, u64 deadline, u64 data),
		    TP_ARGS(wheel, id, deadline, data),
		    TP_STRUCT__entry(__field(u64, wheel)
				     __field(u64, id)
				     __field(u64, deadline)
				     __field(u64, data)),
		    TP_fast_assign(__entry->wheel = wheel;
				   __entry->id = id;
				   __entry->deadline = deadline;
				   __entry->data = data;),
		    TP_printk("wheel=%llu id=%llu deadline=%llu data=%llu",
			      __entry->wheel, __entry->id, __entry->deadline,
			      __entry->data));

/* write(): an id was touched (created, or re-armed at now + timeout) */
DEFINE_EVENT(twheel_id, twheel_touch,
	     TP_PROTO(u64 wheel, u64 id, u64 deadline, u64 data),
	     TP_ARGS(wheel, id, deadline, data));

/* TWHEEL_IOC_ARM: an entry took effect */
DEFINE_EVENT(twheel_id, twheel_arm,
	     TP_PROTO(u64 wheel, u64 id, u64 deadline, u64 data),
	     TP_ARGS(wheel, id, deadline, data));

/* TWHEEL_IOC_CANCEL: an id was removed */
DEFINE_EVENT(twheel_id, twheel_cancel,
	     TP_PROTO(u64 wheel, u64 id, u64 deadline, u64 data),
	     TP_ARGS(wheel, id, deadline, data));

/* An event was queued for an id whose deadline passed */
TRACE_EVENT(twheel_expire,
	    TP_PROTO(u64 wheel, u64 id, u64 deadline, u64 expired),
	    TP_ARGS(wheel, id, deadline, expired),
	    TP_STRUCT__entry(__field(u64, wheel)
			     __field(u64, id)
			     __field(u64, deadline)
			     __field(u64, late)),
	    TP_fast_assign(__entry->wheel = wheel;
			   __entry->id = id;
			   __entry->deadline = deadline;
			   __entry->late = expired - deadline;),
	    TP_printk("wheel=%llu id=%llu deadline=%llu late_ns=%llu",
		      __entry->wheel, __entry->id, __entry->deadline,
		      __entry->late));

/* One bounded expiry batch (one lock hold), in the call that found it due */
TRACE_EVENT(twheel_tick,
	    TP_PROTO(u64 wheel, u64 now, unsigned long expired,
		     unsigned long moved, u64 hold_ns, bool more),
	    TP_ARGS(wheel, now, expired, moved, hold_ns, more),
	    TP_STRUCT__entry(__field(u64, wheel)
			     __field(u64, now)
			     __field(unsigned long, expired)
			     __field(unsigned long, moved)
			     __field(u64, hold_ns)
			     __field(bool, more)),
	    TP_fast_assign(__entry->wheel = wheel;
			   __entry->now = now;
			   __entry->expired = expired;
			   __entry->moved = moved;
			   __entry->hold_ns = hold_ns;
			   __entry->more = more;),
	    TP_printk("wheel=%llu now=%llu expired=%lu moved=%lu hold_ns=%llu more=%d",
		      __entry->wheel, __entry->now, __entry->expired,
		      __entry->moved, __entry->hold_ns, __entry->more));

#endif /* _TWHEEL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE twheel_trace
#include <trace/define_trace.h>
