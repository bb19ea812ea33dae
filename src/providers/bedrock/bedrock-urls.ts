import type { ProviderTarget } from '../provider-target';
import { awsRegion } from './aws-signing';

/** What a streamed Bedrock answer is (ConverseStream, InvokeModelWithResponseStream): AWS's binary event stream. */
export const AWS_EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/** The Bedrock Runtime endpoint of a target: its `custom_host` (a VPC endpoint, a proxy), else the region's. */
export function bedrockBaseUrl(target: ProviderTarget): string {
  const region = awsRegion(target);
  return (target.customHost ?? `https://bedrock-runtime.${region}.amazonaws.com`).replace(/\/+$/, '');
}

/**
 * The path of a model's method. Model ids are Bedrock's own, inference profiles
 * (`us.`/`eu.`/`global.` …) and ARNs included; the id is one path segment, so its `:`
 * and `/` (an ARN's) are escaped.
 */
export function modelUrl(target: ProviderTarget, model: string, method: string): string {
  return `${bedrockBaseUrl(target)}/model/${encodeURIComponent(model)}/${method}`;
}
