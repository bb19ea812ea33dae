import { OpenAICompatibleAdapter } from '../openai-compatible/openai-compatible.adapter';

/** OpenAI: the reference wire format; organization and project travel as headers. */
export const openAIAdapter = new OpenAICompatibleAdapter({
  id: 'openai',
  baseUrl: 'https://api.openai.com/v1',
  sendsOrganizationHeaders: true,
  nativeBatches: true,
  offers: [
    'embeddings',
    'imageGenerations',
    'audioSpeech',
    'audioTranscriptions',
    'audioTranslations',
    'responses',
    'realtime',
    'responsesSocket',
    'fineTuning',
    'models',
    'files',
    'vectorStores',
  ],
});
