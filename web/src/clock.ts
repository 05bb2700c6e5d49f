import { useEffect, useState } from 'preact/hooks';

/** The current time, renewed every `everyMs` while the component is shown. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

export const shortTime = (iso: string): string => new Date(iso).toLocaleString();
