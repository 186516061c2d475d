import type { ComponentProps } from "react";
import { cn } from "../../lib/cn.ts";

/**
 * A table that scrolls sideways inside its own box, never the page. The box takes focus, so a
 * keyboard can scroll it too (a scrollable region must be reachable: WCAG 2.1.1).
 *
 * `contain: inline-size` is what keeps it inside: without it the box's min-content width is the
 * table's, and every grid or flex ancestor whose items keep `min-width: auto` (the page's own grid,
 * tabs, cards) grows to it, so the PAGE scrolled sideways at 390 px (API keys, an app's end users,
 * billing activity) while this box never had to. Contained, the box takes the width it is given.
 */
export function Table({ className, ...props }: ComponentProps<"table">) {
  return (
    <div
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be keyboard-reachable.
      tabIndex={0}
      className="relative w-full overflow-x-auto rounded-md [contain:inline-size] focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
    >
      <table
        className={cn("w-full caption-bottom border-collapse text-sm", className)}
        {...props}
      />
    </div>
  );
}
export const THead = ({ className, ...props }: ComponentProps<"thead">) => (
  <thead className={cn("border-border border-b text-muted-foreground", className)} {...props} />
);
export const TBody = ({ className, ...props }: ComponentProps<"tbody">) => (
  <tbody className={cn("[&_tr:last-child]:border-0", className)} {...props} />
);
export const TFoot = ({ className, ...props }: ComponentProps<"tfoot">) => (
  <tfoot className={cn("border-border border-t bg-muted/50 font-medium", className)} {...props} />
);
export const Tr = ({ className, ...props }: ComponentProps<"tr">) => (
  <tr
    className={cn("border-border border-b transition-colors hover:bg-muted/40", className)}
    {...props}
  />
);
export const Th = ({ className, ...props }: ComponentProps<"th">) => (
  <th
    className={cn(
      "h-10 whitespace-nowrap px-3 text-left align-middle font-medium text-xs uppercase tracking-wide",
      className,
    )}
    {...props}
  />
);
export const Td = ({ className, ...props }: ComponentProps<"td">) => (
  <td className={cn("px-3 py-2.5 align-middle", className)} {...props} />
);
/** Right-aligned, tabular figures: amounts and counts line up. */
export const num = "text-right tabular-nums";
