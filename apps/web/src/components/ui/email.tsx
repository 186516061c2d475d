import { cn } from "../../lib/cn.ts";

/**
 * An email address on one line: never broken mid-word ("raj@tinyled / ger.io", as `break-all`
 * did), cut with an ellipsis when its box is narrower, the whole address on hover. `max-w-full`
 * keeps it inside its container (which must let it shrink: `min-w-0` in a flex or grid item).
 */
export function Email({
  address,
  strong = false,
  className,
}: {
  address: string;
  strong?: boolean;
  className?: string;
}) {
  const Tag = strong ? "strong" : "span";
  return (
    <Tag className={cn("inline-block max-w-full truncate align-bottom", className)} title={address}>
      {address}
    </Tag>
  );
}
