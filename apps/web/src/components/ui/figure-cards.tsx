import type { ReactNode } from "react";
import { useMediaQuery } from "../../lib/use-media-query.ts";

/**
 * Narrower than this, a table of figures is drawn as cards (`FigureCards`): a table whose amounts
 * sit in its last columns hid them behind sideways scrolling at 390 px (Billing's spend, 425 px of
 * table in a 301 px box), and no layout of four or five columns of figures fits a phone.
 */
export const WIDE_TABLE = "(min-width: 40rem)";

/** Whether tables are drawn as tables (else as `FigureCards`). */
export const useWideTable = (): boolean => useMediaQuery(WIDE_TABLE);

export interface FigureCard {
  key: string;
  /** What the row is (a day, a member, an end user). */
  title: ReactNode;
  figures: { label: string; value: ReactNode }[];
  /** A button for the row (Erase), under its figures. */
  action?: ReactNode;
}

/**
 * A table's rows as a list of cards, each its title and its columns as label and value (as
 * Stripe's dashboard does on a phone), so every figure is on screen without sideways scrolling.
 * The billing tables of `DataTable` do the same for TanStack columns.
 */
export function FigureCards({ label, cards }: { label: string; cards: FigureCard[] }) {
  return (
    <ul aria-label={label} className="grid gap-2">
      {cards.map((card) => (
        <li key={card.key} className="grid gap-2 rounded-md border border-border p-3 text-sm">
          <div className="min-w-0 [overflow-wrap:anywhere]">{card.title}</div>
          <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1.5">
            {card.figures.map((figure) => (
              <div key={figure.label} className="contents">
                <dt className="text-muted-foreground text-xs uppercase tracking-wide leading-5">
                  {figure.label}
                </dt>
                <dd className="min-w-0 text-right tabular-nums">{figure.value}</dd>
              </div>
            ))}
          </dl>
          {card.action ? <div className="justify-self-end">{card.action}</div> : null}
        </li>
      ))}
    </ul>
  );
}
