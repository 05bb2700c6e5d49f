import { useEffect, useState } from 'preact/hooks';

/** What the API tells the page about its deployment (`/app/config.json`); absent on an API that serves none. */
export interface AppConfig {
  temporalUi: { url: string; namespace: string } | null;
}

let loaded: Promise<AppConfig | null> | undefined;

function loadConfig(): Promise<AppConfig | null> {
  loaded ??= fetch(`${location.origin}/app/config.json`)
    .then((response) =>
      response.ok && response.headers.get('content-type')?.includes('json') ? response.json() : null,
    )
    .catch(() => null) as Promise<AppConfig | null>;
  return loaded;
}

export function useAppConfig(): AppConfig | null {
  const [config, setConfig] = useState<AppConfig | null>(null);
  useEffect(() => {
    void loadConfig().then(setConfig);
  }, []);
  return config;
}

/** The run's page in the Temporal UI, or null when the page does not know where the UI is. */
export function temporalRunUrl(config: AppConfig | null, workflowId: string): string | null {
  const ui = config?.temporalUi;
  if (!ui) return null;
  return `${ui.url.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
