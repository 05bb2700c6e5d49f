import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { SkillManifest } from '../../core/skills/types';
import type { ApiContext, SkillCatalogSource } from '../context';
import { HttpError, notFound } from '../errors';
import { SkillCatalogPage, SkillDetail, SkillListQuery, SkillParams, errorResponses } from '../../core/protocol';

export async function skillRoutes(app: FastifyInstance, { skills }: ApiContext): Promise<void> {
  const catalog = async (source: SkillCatalogSource | undefined) => {
    if (!source) throw new HttpError(503, 'unavailable', 'The skill catalog is not available in this API process.');
    return source.catalog();
  };

  app.get<{ Querystring: Static<typeof SkillListQuery> }>(
    '/v1/skills',
    {
      schema: {
        operationId: 'listSkills',
        summary: 'The skill catalog: valid, enabled skills, by name',
        tags: ['skills'],
        querystring: SkillListQuery,
        response: { 200: SkillCatalogPage, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => {
      const { category } = request.query;
      const entries = (await catalog(skills)).skills.filter(
        (skill) => category === undefined || skill.category === category,
      );
      return { skills: entries.map(summaryOf) };
    },
  );

  app.get<{ Params: Static<typeof SkillParams> }>(
    '/v1/skills/:name',
    {
      schema: {
        operationId: 'getSkill',
        summary: 'One skill of the catalog, with its parameters, plan, checkpoints and files',
        tags: ['skills'],
        params: SkillParams,
        response: { 200: SkillDetail, ...errorResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request) => {
      const skill = (await catalog(skills)).skills.find((entry) => entry.name === request.params.name);
      if (!skill) throw notFound(`Skill ${request.params.name}`);
      return detailOf(skill);
    },
  );
}

function summaryOf(skill: SkillManifest) {
  return {
    name: skill.name,
    description: skill.description,
    category: skill.category,
    tags: skill.tags,
    version: skill.version,
    parameters: skill.parameters,
    steps: skill.plan?.steps ?? [],
    checkpoints: skill.checkpoints.map((checkpoint) => checkpoint.name),
  };
}

function detailOf(skill: SkillManifest) {
  return {
    ...summaryOf(skill),
    license: skill.license,
    compatibility: skill.compatibility,
    metadata: skill.metadata,
    plan: skill.plan?.source ?? null,
    output: skill.output,
    checkpointSpecs: skill.checkpoints.map(({ name, kind, ttlMs, onTimeout, params, routes }) => ({
      name,
      kind,
      ttlMs,
      onTimeout,
      params,
      routes,
    })),
    children: skill.children,
    subskills: skill.subskills,
    resources: skill.resources,
  };
}
