"""Time cues in the questions of other languages: each gets the window its English or Japanese twin gets."""

from datetime import datetime, timezone

import pytest

from lumina_memory.nodes.retrieval.temporal import time_cues, time_window

NOW = datetime(2023, 10, 20, 12, tzinfo=timezone.utc).timestamp()  # a Friday


def _window(query: str) -> tuple[str, str] | None:
    window = time_window(query, NOW)
    if window is None:
        return None
    return tuple(datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d") for t in window)


@pytest.mark.parametrize("twin, questions", [
    ("What did I do on 8 May 2023?", [
        "¿Qué hice el 8 de mayo de 2023?", "Was habe ich am 8. Mai 2023 gemacht?", "Qu'ai-je fait le 8 mai 2023 ?",
        "Cosa ho fatto l'8 maggio 2023?", "O que eu fiz em 8 de maio de 2023?", "Wat deed ik op 8 mei 2023?",
        "2023년 5월 8일에 뭐 했어?", "2023年5月8日我做了什么？", "我5月8号做了什么？",
    ]),
    ("What did I do on 8 May?", ["Qu'ai-je fait le 8 mai ?", "¿Qué hice el 8 de mayo?", "Was tat ich am 8. Mai?",
                                 "Wat deed ik op 8 mei?", "Cosa ho fatto l'8 maggio?"]),
    ("What did I do in May?", [
        "¿Qué hice en mayo?", "Was habe ich im Mai gemacht?", "Qu'ai-je fait en mai ?", "Cosa ho fatto a maggio?",
        "O que fiz em maio?", "Wat deed ik in mei?", "5월에 뭐 했어?",
    ]),
    ("What happened in March 2022?", ["¿Qué pasó en marzo de 2022?", "Was geschah im März 2022?",
                                     "Que s'est-il passé en mars 2022 ?", "Wat gebeurde er in maart 2022?"]),
    ("What did I read in late June?", ["¿Qué leí a finales de junio?", "Was las ich Ende Juni?",
                                      "Qu'ai-je lu fin juin ?"]),
    ("What did I do last week?", [
        "¿Qué hice la semana pasada?", "Was habe ich letzte Woche gemacht?", "Qu'ai-je fait la semaine dernière ?",
        "Cosa ho fatto la settimana scorsa?", "O que fiz na semana passada?", "Wat deed ik vorige week?",
        "지난주에 뭐 했어?", "上周我做了什么？", "上個星期我做了什麼？",
    ]),
    ("Where did I go last month?", ["¿Adónde fui el mes pasado?", "Wo war ich letzten Monat?",
                                    "Où suis-je allé le mois dernier ?", "지난달에 어디 갔어?", "上个月我去了哪里？"]),
    ("What did I buy last year?", ["¿Qué compré el año pasado?", "Was habe ich letztes Jahr gekauft?",
                                   "Qu'ai-je acheté l'année dernière ?", "Cosa ho comprato l'anno scorso?",
                                   "작년에 뭐 샀어?"]),
    ("What did I eat yesterday?", ["¿Qué comí ayer?", "Was habe ich gestern gegessen?", "Cosa ho mangiato ieri?",
                                   "O que comi ontem?", "Wat at ik gisteren?", "어제 뭐 먹었어?", "我昨天吃了什么？"]),
    ("What did I say the day before yesterday?", ["¿Qué dije anteayer?", "Qu'ai-je dit avant-hier ?",
                                                  "Was sagte ich vorgestern?", "我前天说了什么？"]),
    ("What did I cook three days ago?", ["¿Qué cociné hace tres días?", "Qu'ai-je cuisiné il y a trois jours ?",
                                         "Was kochte ich vor drei Tagen?", "Cosa ho cucinato tre giorni fa?",
                                         "Wat kookte ik drie dagen geleden?", "3일 전에 뭐 요리했어?",
                                         "我三天前做了什么菜？"]),
    ("Who did I meet a few weeks ago?", ["¿A quién conocí hace unas semanas?", "Wen traf ich vor ein paar Wochen?",
                                         "Qui ai-je rencontré il y a quelques semaines ?"]),
    ("What did I do last Friday?", [
        "¿Qué hice el viernes pasado?", "Qu'ai-je fait vendredi dernier ?", "Was machte ich letzten Freitag?",
        "Cosa ho fatto lo scorso venerdì?", "O que fiz na sexta-feira passada?", "Wat deed ik vorige vrijdag?",
        "지난 금요일에 뭐 했어?", "上周五我做了什么？",
    ]),
    ("Where was I last weekend?", ["¿Dónde estuve el fin de semana pasado?", "Wo war ich letztes Wochenende?",
                                   "Où étais-je le week-end dernier ?", "지난 주말에 어디 있었어?", "上周末我在哪里？"]),
    ("What did I plan in 2022?", ["¿Qué planeé en 2022?", "Was plante ich im Jahr 2022?",
                                  "Cosa ho pianificato nel 2022?"]),
])
def test_a_question_in_another_language_opens_the_window_of_its_english_twin(twin, questions):
    expected = _window(twin)
    assert expected is not None
    for question in questions:
        assert _window(question) == expected, question


def test_a_date_in_another_language_inside_an_english_question_is_still_a_date():
    assert _window("What did Nate do on 25 de mayo de 2022?") == _window("What did Nate do on 25 May 2022?")
    assert _window("What did she say am 8. Mai 2023?") == _window("What did she say on 8 May 2023?")


@pytest.mark.parametrize("question", [
    "I bought mayo at the shop, what else?",  # Spanish "mayo" is May only beside a day, a year or "en"
    "Do you remember the mai tai?",  # French / German "mai" likewise
    "I ate 3 Mars bars and 2 mai tais",  # a number before them is not a day either
    "Did Domingo come to the party?",  # a weekday's name is one only with its "last"
    "I said hier ist es schön",  # German "here", French "yesterday": not read
    "Guten Morgen! Wie geht's?",  # "morgen" is tomorrow and the morning
    "¿Qué desayuné esta mañana?",  # "mañana" likewise
    "What do you think about life on Mars?",
])
def test_words_that_only_look_like_time_open_no_window(question):
    assert time_window(question, NOW) is None


def test_japanese_is_not_read_as_chinese():
    # 前年 is "the year before" in Japanese and "the year before last" in Chinese; Japanese text keeps its reading.
    assert _window("前年の夏に何をした？") == _window("夏に何をした？") != _window("一昨年の夏に何をした？")
    assert time_cues("昨日は何を食べた？", NOW).window == time_cues("我昨天吃了什么？", NOW).window
    assert _window("先週の金曜日に何をした？") == _window("What did I do last Friday?")


@pytest.mark.parametrize("twin, questions", [
    ("What did I do last week?", ["ماذا فعلت الأسبوع الماضي؟", "मैंने पिछले हफ्ते क्या किया?", "ฉันทำอะไรสัปดาห์ที่แล้ว",
                                  "Что я делал на прошлой неделе?"]),
    ("What did I eat yesterday?", ["ماذا أكلت أمس؟", "ฉันกินอะไรเมื่อวาน", "Что я ел вчера?"]),
    ("What did I cook 3 days ago?", ["ماذا طبخت قبل 3 أيام؟", "मैंने 3 दिन पहले क्या पकाया?", "ฉันทำอาหารอะไร 3 วันที่แล้ว",
                                     "Что я готовил 3 дня назад?"]),
    ("Where am I going next month?", ["إلى أين سأذهب الشهر القادم؟", "अगले महीने मैं कहाँ जा रही हूँ?",
                                      "ฉันจะไปไหนเดือนหน้า", "Куда я поеду в следующем месяце?"]),
    ("What did I buy last year?", ["ماذا اشتريت العام الماضي؟", "मैंने पिछले साल क्या खरीदा?", "ปีที่แล้วฉันซื้ออะไร",
                                   "Что я купил в прошлом году?"]),
])
def test_relative_times_in_arabic_hindi_thai_and_russian(twin, questions):
    expected = _window(twin)
    assert expected is not None
    for question in questions:
        assert _window(question) == expected, question


# Their named days and months (2026-12-03: "8 мая 2023", 「8 मई 2023」, "٨ مايو ٢٠٢٣", "8 พฤษภาคม 2566" opened none),
# in their own digits too, and Thai years in the Buddhist era (2566 is 2023).
SCRIPT_DAYS = [
    ("What did I do on 8 May 2023?", [
        "Что я делал 8 мая 2023 года?", "Что я делал 8 мая 2023 г.?", "मैंने 8 मई 2023 को क्या किया?",
        "मैंने ८ मई २०२३ को क्या किया?", "ماذا فعلت في 8 مايو 2023؟", "ماذا فعلت في ٨ مايو ٢٠٢٣؟",
        "ماذا فعلت في 8 أيار 2023؟", "ฉันทำอะไรเมื่อวันที่ 8 พฤษภาคม 2566", "ฉันทำอะไรวันที่ 8 พ.ค. 2566",
        "ฉันทำอะไรวันที่ ๘ พฤษภาคม ๒๕๖๖", "ฉันทำอะไรวันที่ 8 พฤษภาคม ค.ศ. 2023", "ฉันทำอะไรวันที่ 8 พ.ค. 66",
    ]),
    ("What did I do on 8 May?", ["Что я делал 8 мая?", "मैंने 8 मई को क्या किया?", "ماذا فعلت في 8 مايو؟",
                                 "ฉันทำอะไรวันที่ 8 พฤษภาคม", "ฉันทำอะไรวันที่ 8 พฤษภาคม 10 โมง"]),
    ("What did I do on 11 October 2022?", ["Что я делал 11 октября 2022?", "मैंने 11 अक्टूबर 2022 को क्या किया?",
                                           "ماذا فعلت في 11 أكتوبر 2022؟", "ماذا فعلت في 11 تشرين الأول 2022؟",
                                           "ฉันทำอะไรวันที่ 11 ตุลาคม 2565"]),
    ("What did I do in May?", ["Что я делал в мае?", "मैंने मई में क्या किया?", "ماذا فعلت في مايو؟",
                               "ماذا فعلت في شهر مايو؟", "ฉันทำอะไรในเดือนพฤษภาคม"]),
    ("What happened in March 2022?", ["Что случилось в марте 2022 года?", "मार्च 2022 में क्या हुआ?",
                                     "ماذا حدث في مارس 2022؟", "เกิดอะไรขึ้นในเดือนมีนาคม 2565"]),
    ("Where was I between August 11 and 15?", ["Где я был с 11 по 15 августа?", "ฉันอยู่ที่ไหนวันที่ 11-15 สิงหาคม"]),
    ("What did I plan in 2022?", ["Что я планировал в 2022 году?", "मैंने 2022 में क्या योजना बनाई?",
                                  "ماذا خططت في عام ٢٠٢٢؟", "ฉันวางแผนอะไรในปี 2565"]),
]


# Their weekdays (2026-12-03: "в прошлую пятницу", "पिछले शुक्रवार", "يوم الجمعة الماضي", "วันศุกร์ที่แล้ว" opened none).
SCRIPT_WEEKDAYS = [
    ("What did I do last Friday?", ["Что я делал в прошлую пятницу?", "मैंने पिछले शुक्रवार क्या किया?",
                                    "ماذا فعلت يوم الجمعة الماضي؟", "ماذا فعلت الجمعة الماضية؟", "ฉันทำอะไรวันศุกร์ที่แล้ว"]),
    ("Where did we eat on Saturday?", ["Где мы ели в субботу?", "हमने शनिवार को कहाँ खाया?", "أين أكلنا يوم السبت؟",
                                       "เรากินที่ไหนวันเสาร์"]),
    ("What did I tell you on Wednesday?", ["Что я сказал тебе в среду?", "मैंने बुधवार को तुम्हें क्या बताया?",
                                           "ماذا قلت لك يوم الأربعاء؟", "ฉันบอกอะไรคุณวันพุธ"]),
    ("What am I doing next Monday?", ["Что я делаю в следующий понедельник?", "अगले सोमवार मैं क्या कर रहा हूँ?",
                                      "ماذا سأفعل يوم الاثنين القادم؟", "ฉันจะทำอะไรวันจันทร์หน้า"]),
    ("What did I do last week?", ["ฉันทำอะไรอาทิตย์ที่แล้ว"]),  # อาทิตย์ alone is a week; วันอาทิตย์ is Sunday
    ("What did I do last Sunday?", ["ฉันทำอะไรวันอาทิตย์ที่แล้ว", "Что я делал в прошлое воскресенье?"]),
]


# Holidays in their own words (2026-12-03: "en Navidad", 「크리스마스」, 「圣诞节」 opened none).
HOLIDAYS_ABROAD = [
    ("What did I do at Christmas?", [
        "¿Qué hice en Navidad?", "Was habe ich an Weihnachten gemacht?", "Qu'ai-je fait à Noël ?", "Cosa ho fatto a Natale?",
        "O que fiz no Natal?", "Wat deed ik met Kerstmis?", "크리스마스에 뭐 했어?", "我圣诞节做了什么？", "我聖誕節做了什麼？",
        "ماذا فعلت في الكريسماس؟", "मैंने क्रिसमस पर क्या किया?", "ฉันทำอะไรวันคริสต์มาส",
    ]),
    ("What did I do last Christmas?", ["¿Qué hice la Navidad pasada?", "Was habe ich letztes Weihnachten gemacht?",
                                       "작년 크리스마스에 뭐 했어?", "我去年圣诞节做了什么？"]),
    ("What did I do on Christmas Eve?", ["¿Qué hice en Nochebuena?", "Was habe ich an Heiligabend gemacht?",
                                         "我平安夜做了什么？", "크리스마스 이브에 뭐 했어?"]),
    ("What did I do on New Year's Eve?", ["¿Qué hice en Nochevieja?", "Was habe ich an Silvester gemacht?",
                                          "Qu'ai-je fait à la Saint-Sylvestre ?", "Wat deed ik op oudejaarsavond?"]),
    ("What did I do on New Year's Day?", ["¿Qué hice en Año Nuevo?", "Was habe ich an Neujahr gemacht?",
                                          "Qu'ai-je fait le jour de l'an ?", "Cosa ho fatto a Capodanno?",
                                          "Wat deed ik op Nieuwjaarsdag?", "Что я делал на Новый год?"]),
    ("What did I do at Easter?", ["¿Qué hice en Semana Santa?", "Was habe ich an Ostern gemacht?",
                                  "Qu'ai-je fait à Pâques ?", "Cosa ho fatto a Pasqua?", "O que fiz na Páscoa?",
                                  "부활절에 뭐 했어?", "我复活节做了什么？"]),
    ("What did I do on Halloween?", ["我万圣节做了什么？", "할로윈에 뭐 했어?", "ฉันทำอะไรวันฮาโลวีน", "Что я делал на Хэллоуин?"]),
    ("What did I give on Valentine's Day?", [
        "¿Qué regalé en San Valentín?", "Was habe ich zum Valentinstag geschenkt?", "Qu'ai-je offert à la Saint-Valentin ?",
        "Cosa ho regalato a San Valentino?", "Wat gaf ik op Valentijnsdag?", "我情人节送了什么？", "발렌타인데이에 뭘 줬어?",
        "ماذا أهديت في عيد الحب؟", "मैंने वैलेंटाइन डे पर क्या दिया?", "ฉันให้อะไรวันวาเลนไทน์",
        "Что я подарил на День святого Валентина?",
    ]),
]


@pytest.mark.parametrize("twin, questions", SCRIPT_DAYS + SCRIPT_WEEKDAYS + HOLIDAYS_ABROAD)
def test_days_weekdays_and_holidays_in_their_own_words(twin, questions):
    """Arabic, Hindi, Thai and Russian days, months, years and weekdays; holidays in all twelve languages."""
    expected = _window(twin)
    assert expected is not None
    for question in questions:
        assert _window(question) == expected, question


@pytest.mark.parametrize("question", [
    "Март — мой любимый месяц?",  # a month's name alone, without a day, a year or "в"
    "मई मेरा पसंदीदा महीना है?",
    "ฉันมี 3 แมว",  # a count, not a day
    "У меня 3 кошки и 2 собаки",
    "मैं घर में हूँ",  # में after any other word is "in" a place
    "الاثنين ذهبا إلى السوق",  # الاثنين is "the two" as well as Monday: a day only after يوم or before الماضي
    "शुक्रवार मेरा पसंदीदा दिन है",  # a weekday named, not a day pointed at
    "Я изучаю среду обитания",  # среду without в is the environment
    "Sylvester came by",  # a name, not New Year's Eve (German Silvester needs its an / zu)
    "¿Qué pasen los invitados?",
])
def test_their_month_names_alone_open_no_window(question):
    assert time_window(question, NOW) is None


@pytest.mark.parametrize("question", [
    "ماذا حدث في اليوم الذي انتقلت فيه؟",  # اليوم is "the day" too
    "मैं कल क्या करूँगी?",  # कल is yesterday and tomorrow
    "قبل أن أنام ماذا قلت؟",  # قبل without a count is "before"
    "आजकल मुझे कौन सा खाना पसंद है?",  # आज (today) inside आजकल (nowadays)
])
def test_words_of_those_languages_that_need_more_than_a_word_open_no_window(question):
    assert time_window(question, NOW) is None


def test_a_question_asked_for_its_cues_and_its_window_is_read_once():
    from lumina_memory.nodes.retrieval.temporal_text import normalise

    question = "¿Qué hice la semana pasada? " + "Cuéntame todo lo que recuerdes, con detalles. " * 40
    normalise.cache_clear()
    cues = time_cues(question, NOW)
    window = time_window(question, NOW)
    assert window is not None and window == cues.window
    info = normalise.cache_info()
    assert (info.misses, info.hits) == (1, 1)
