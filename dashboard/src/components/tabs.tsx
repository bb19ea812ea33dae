import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';

export interface Tab {
  id: string;
  label: string;
}

/**
 * Tabs as the ARIA pattern has them: arrow keys, Home and End move between tabs and show
 * the one they land on; Tab goes into the shown panel.
 */
export function Tabs({
  label,
  tabs,
  selected,
  onSelect,
  children,
}: {
  label: string;
  tabs: Tab[];
  selected: string;
  onSelect: (id: string) => void;
  children: ComponentChildren;
}) {
  const list = useRef<HTMLDivElement>(null);
  const onKey = (event: KeyboardEvent) => {
    const index = tabs.findIndex((tab) => tab.id === selected);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const tab = tabs[(next + tabs.length) % tabs.length];
    onSelect(tab.id);
    requestAnimationFrame(() => list.current?.querySelector<HTMLButtonElement>(`[data-tab="${tab.id}"]`)?.focus());
  };
  const panelId = (id: string) => `panel-${id}`;
  return (
    <div class="tabs">
      <div role="tablist" aria-label={label} ref={list} onKeyDown={onKey} class="tab-list">
        {tabs.map((tab) => (
          <button
            key={tab.id}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            data-tab={tab.id}
            aria-selected={tab.id === selected}
            aria-controls={tab.id === selected ? panelId(tab.id) : undefined}
            tabIndex={tab.id === selected ? 0 : -1}
            class="tab"
            onClick={() => onSelect(tab.id)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={panelId(selected)} aria-labelledby={`tab-${selected}`} class="tab-panel">
        {children}
      </div>
    </div>
  );
}
