/**
 * The OpenCode plugin module: only the default export (`{ id, server }`, the form OpenCode 1.18
 * loads), so that no helper is taken for a plugin. The hooks are in plugin.ts.
 */
import type { PluginModule } from "@opencode-ai/plugin";

import { PostcompactPlugin } from "./plugin.js";

export type { PostcompactPluginOptions } from "./plugin.js";

const plugin: PluginModule = { id: "postcompact", server: PostcompactPlugin };
export default plugin;
