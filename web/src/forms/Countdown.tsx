import { clock } from '../conversation/position';
import { useNow } from '../clock';

/** Time left until `until` (ISO or ms), counting down each second; "time is up" after it. */
export function Countdown({ until, label }: { until: string | number; label: string }) {
  const now = useNow();
  const end = typeof until === 'number' ? until : Date.parse(until);
  const left = end - now;
  return (
    <span class={left < 60_000 ? 'countdown urgent' : 'countdown'} role="timer" aria-label={label}>
      {left > 0 ? `${clock(left)} left` : 'time is up'}
    </span>
  );
}
