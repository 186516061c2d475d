import type { Alias, Plugin } from "vite";

export declare const preactAliases: Alias[];
export declare function embedShims(): Plugin;
export declare function embedPlugins(): Plugin[];
