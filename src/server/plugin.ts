import type { FastifyPluginCallback } from 'fastify';

/**
 * Marks a plugin to share its hooks, handlers and decorations with the instance it is registered on, as the
 * fastify-plugin package does (Fastify docs, "Plugins", the 'skip-override' property): each concern of the server is
 * a plugin of its own, and all of them serve the same routes.
 */
export function sharedPlugin<Options extends Record<string, unknown>>(plugin: FastifyPluginCallback<Options>): FastifyPluginCallback<Options> {
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });
  return plugin;
}
